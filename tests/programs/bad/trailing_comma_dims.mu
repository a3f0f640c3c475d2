input X : f16[2, 3,]
output X
