input X : f16[2, 8]
Y = slice(X, dim=1, start=6, len=3)
output Y
