# Multi-query attention at decode, 8 sequences: each sequence's 32 query heads share its one
# key/value head of 128, 4096 keys (issue #26 item 2's MQA b=8).
input Q : f16[8, 32, 128]
input K : f16[8, 128, 4096]
input V : f16[8, 4096, 128]
S = exp(matmul(Q, K) / 8)
O = matmul(S / sum(S, dim=2), V)
output O
