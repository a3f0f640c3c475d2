input X : f32[8, 16]
O = exp(X * 1000)
output O
