input X : f16[2, 4]
Y = const(X)
output Y
