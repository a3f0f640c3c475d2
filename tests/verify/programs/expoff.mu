input X : f32[2, 64]
O = exp(X + 1)
output O
