input X : f16[2, 4]
Y = (X + 1
output Y
