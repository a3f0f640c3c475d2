input X : f32[8, 16]
O = X * 9
output O
