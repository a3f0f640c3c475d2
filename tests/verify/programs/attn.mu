input Q : f32[2, 8, 4]
input K : f32[2, 4, 32]
input V : f32[2, 32, 4]
S = exp(matmul(Q, K))
O = matmul(S / sum(S, dim=2), V)
output O
