# Grouped-query attention: 8 KV heads of 64, 4 query heads x 8 tokens each, 2048 keys, S / 8.
input Q : f16[8, 32, 64]
input K : f16[8, 64, 2048]
input V : f16[8, 2048, 64]
S = exp(matmul(Q, K) / 8)
O = matmul(S / sum(S, dim=2), V)
output O
