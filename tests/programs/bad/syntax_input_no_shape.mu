input X : f16
output X
