input X : f32[64]
O = X / 2
output O
