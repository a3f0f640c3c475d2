dim x [1, 4]
input x : f16[x, 16]
y = exp(x)
output y
