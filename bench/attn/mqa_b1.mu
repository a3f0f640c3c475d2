# Multi-query attention at decode, 1 sequence: 32 query heads share one key/value head of 128,
# 4096 keys (issue #26 item 2's MQA b=1).
input Q : f16[1, 32, 128]
input K : f16[1, 128, 4096]
input V : f16[1, 4096, 128]
S = exp(matmul(Q, K) / 8)
O = matmul(S / sum(S, dim=2), V)
output O
