input A : f16[2, 3]
input B : f16[4, 5]
C = concat(A, B, dim=0)
output C
