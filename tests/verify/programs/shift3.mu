input X : f32[8, 16]
O = X + 3
output O
