input A : f16[2, 3]
input B : f16[2, 3]
C = concat(A, B, dim=2)
output C
