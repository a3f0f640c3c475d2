input X : f16[2]
Y = X[0]
output Y
