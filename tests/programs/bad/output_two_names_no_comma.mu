input X : f16[2]
Y = exp(X)
output Y X
