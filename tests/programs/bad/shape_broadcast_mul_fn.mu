input A : f32[4, 3]
input B : f32[3, 4]
C = mul(A, B)
output C
