input X : f16[2, 4]
X = exp(X)
output X
