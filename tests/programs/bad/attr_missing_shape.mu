input X : f16[2, 4]
Y = reshape(X)
output Y
