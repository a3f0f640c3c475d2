input A : f16[2, 3]
C = repeat(A, times=[2])
output C
