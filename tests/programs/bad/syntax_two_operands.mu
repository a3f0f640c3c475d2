input X : f16[2, 4]
Y = X X
output Y
