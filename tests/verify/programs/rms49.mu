input X : f32[4, 49]
O = X / sqrt(sum(sqr(X), dim=1) / 49)
output O
