input A : f16[2, 3]
C = repeat(A, times=[0, 1])
output C
