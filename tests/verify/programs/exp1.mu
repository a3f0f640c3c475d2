input X : f32[8, 16]
O = exp(X)
output O
