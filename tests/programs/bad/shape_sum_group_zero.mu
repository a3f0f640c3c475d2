input A : f16[2, 6]
C = sum(A, dim=1, group=0)
output C
