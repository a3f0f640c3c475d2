input X : f32[2, 121]
O = X / sqrt(sum(sqr(X), dim=1) / 121)
output O
