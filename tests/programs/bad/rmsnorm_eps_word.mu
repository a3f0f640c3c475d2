input X : f16[2, 8]
Y = rmsnorm(X, eps=small)
output Y
