input X : f32[2, 25]
O = X / sqrt(sum(sqr(X), dim=1) / 25)
output O
