input X : f16[2, 3, 4]
Y = transpose(X, perm=[0, 2, 2])
output Y
