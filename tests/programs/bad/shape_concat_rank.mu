input A : f16[2, 3]
input B : f16[2, 3, 1]
C = concat(A, B, dim=0)
output C
