input X : f16[2, 4]
Y = sum(X, axis=1)
output Y
