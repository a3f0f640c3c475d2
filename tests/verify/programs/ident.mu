input X : f32[8, 16]
O = X * 1
output O
