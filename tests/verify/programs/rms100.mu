input X : f32[4, 100]
O = X / sqrt(sum(sqr(X), dim=1) / 100)
output O
