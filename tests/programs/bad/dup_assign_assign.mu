input X : f16[2, 4]
Y = exp(X)
Y = sqr(X)
output Y
