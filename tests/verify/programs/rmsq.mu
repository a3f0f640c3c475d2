input X : f32[16, 16]
O = X / sqrt(sum(sqr(X), dim=1) / 16)
output O
