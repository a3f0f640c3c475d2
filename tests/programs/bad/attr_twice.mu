input X : f16[2, 4]
Y = sum(X, dim=1, dim=0)
output Y
