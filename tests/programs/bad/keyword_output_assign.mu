input X : f16[2, 4]
output = X + 1
output X
