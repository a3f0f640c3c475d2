input A : f16[3]
input B : f16[3, 5]
C = matmul(A, B)
output C
