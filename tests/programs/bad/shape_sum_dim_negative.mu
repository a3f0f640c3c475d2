input A : f16[2, 6]
C = sum(A, dim=-3)
output C
