input X : f16[2, 4]
Y = add(X)
output Y
