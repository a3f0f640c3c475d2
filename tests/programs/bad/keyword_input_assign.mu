input X : f16[2, 4]
input = X + 1
output X
