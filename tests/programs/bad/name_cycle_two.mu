input X : f16[2, 4]
A = B + X
B = A * 2
output B
