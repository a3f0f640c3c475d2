input X : f16[2]
output X
