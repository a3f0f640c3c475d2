input X : f32[8, 32]
O = sum(X, dim=1)
output O
