input X : f16[2, 4]
Y = reshape(X, shape=8)
output Y
