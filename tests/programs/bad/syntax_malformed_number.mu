input X : f16[2, 4]
Y = X * 12abc
output Y
