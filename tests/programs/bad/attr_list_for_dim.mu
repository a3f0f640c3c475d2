input X : f16[2]
Y = sum(X, dim=[1])
output Y
