input A : f32[]
input B : f32[]
C = concat(A, B, dim=0)
output C
