input X : f16[2, 4]
Y = exp(X, dim=1)
output Y
