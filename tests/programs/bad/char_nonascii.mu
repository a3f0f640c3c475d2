input X : f16[2]
Y = exp(X) × 2
output Y
