input X : f32[4, 32]
O = X / sqrt(sum(sqr(X), dim=1) / 32)
output O
