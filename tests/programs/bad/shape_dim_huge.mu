input A : f16[2, 6]
C = sum(A, dim=100)
output C
