input A : f32[]
C = sum(A, dim=0)
output C
