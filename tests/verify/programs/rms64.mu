input X : f32[4, 64]
O = X / sqrt(sum(sqr(X), dim=1) / 64)
output O
