input X : f16[2, 4]
Y = sum(X, dim=1.5)
output Y
