input X : f16[2, 2]
input Y : f16[2, 2]
Z = X + Y
output X, Z, Y
