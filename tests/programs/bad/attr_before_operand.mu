input X : f16[2, 4]
Y = sum(dim=1, X)
output Y
