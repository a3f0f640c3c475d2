input X : f16[2]
Y = X ** 2
output Y
