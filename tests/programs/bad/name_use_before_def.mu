input X : f16[2, 4]
A = B + 1
B = X * 2
output A
