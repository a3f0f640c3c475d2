input X : f32[4, 16]
O = X / sqrt(sum(sqr(X), dim=1) / 4.294967087)
output O
