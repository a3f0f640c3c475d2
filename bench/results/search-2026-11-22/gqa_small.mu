input Q : f16[2, 16, 8]
input K : f16[2, 8, 64]
input V : f16[2, 64, 8]
S = exp(matmul(Q, K))
O = matmul(S / sum(S, dim=2), V)
output O
