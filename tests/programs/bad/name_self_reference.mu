input X : f16[2, 4]
A = A + 1
output A
