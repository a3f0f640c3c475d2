input A : f16[2, 6]
C = rmsnorm(A, dim=2)
output C
