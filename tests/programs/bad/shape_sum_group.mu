input A : f16[2, 6]
C = sum(A, dim=1, group=4)
output C
