input X : f16[6]
Y = reshape(X, shape=[2, 3,])
output Y
