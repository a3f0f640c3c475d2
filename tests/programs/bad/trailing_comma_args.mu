input X : f16[2, 3]
Y = add(X, X,)
output Y
