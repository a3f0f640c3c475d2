input X : f16[2]
Y = exp()
output Y
