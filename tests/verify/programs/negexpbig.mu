input X : f32[8, 16]
O = 0 - exp(X * 1000)
output O
