input X : f32[2, 32]
O = 0 - X
output O
