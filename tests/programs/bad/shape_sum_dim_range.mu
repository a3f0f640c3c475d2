input A : f16[2, 6]
C = sum(A, dim=2)
output C
