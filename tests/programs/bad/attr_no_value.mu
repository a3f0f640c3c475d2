input X : f16[2, 4]
Y = sum(X, dim=)
output Y
