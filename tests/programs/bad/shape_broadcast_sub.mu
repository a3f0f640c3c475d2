input A : f16[4, 1, 3]
input B : f16[2, 5]
C = sub(A, B)
output C
