input X : f32[4, 32]
C = X - sum(X, dim=1) / 32
O = sum(sqr(C), dim=1) / 32
output O
