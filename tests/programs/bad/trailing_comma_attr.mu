input X : f16[2, 3]
Y = sum(X, dim=1,)
output Y
