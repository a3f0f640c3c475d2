input A : f16[2, 6]
C = max(A, dim=5)
output C
