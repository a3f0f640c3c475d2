# Multi-query attention, 4 sequences: 16 heads x 4 tokens share one K/V head of 64, 1024 keys.
input Q : f16[4, 64, 64]
input K : f16[4, 64, 1024]
input V : f16[4, 1024, 64]
S = exp(matmul(Q, K) * 0.125)
O = matmul(S / sum(S, dim=2), V)
output O
