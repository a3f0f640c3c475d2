input X : f32[4, 8]
O = X / 9.223371137059149241
output O
