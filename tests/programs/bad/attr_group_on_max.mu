input X : f16[2, 4]
Y = max(X, dim=1, group=2)
output Y
