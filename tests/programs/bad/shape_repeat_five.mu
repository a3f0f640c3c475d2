input X : f16[2]
Y = repeat(X, times=[2, 1, 1, 1, 1])
output Y
