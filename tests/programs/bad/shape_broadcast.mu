input A : f16[2, 3]
input B : f16[2, 4]
C = A + B
output C
