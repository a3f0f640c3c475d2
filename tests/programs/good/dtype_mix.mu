# f32, bf16 and f16 operands: mixed binary operands compute in f32
input A : bf16[4, 8]
input B : f32[4, 8]
input C : f16[8]
input D : bf16[8, 2]
S = A + B
T = A * C
U = matmul(A, D)
V = concat(A, B, dim=0)
W = A - 2.5
output S, T, U, V, W
