input X : f16[2, 4]
Y = softmax(X)
output Y
