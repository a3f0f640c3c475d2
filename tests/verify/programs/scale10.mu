input X : f32[4, 4, 8]
O = X * 10
output O
