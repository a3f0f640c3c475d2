input X : f16[2, 4]
Y = exp(X, X)
output Y
