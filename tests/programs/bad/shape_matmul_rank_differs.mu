input A : f16[2, 4, 3]
input B : f16[3, 5]
C = matmul(A, B)
output C
