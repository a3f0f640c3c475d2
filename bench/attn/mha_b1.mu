# Multi-head attention at decode, 1 sequence: 32 heads of 128, one query each, 4096 keys
# (issue #26 item 2's MHA b=1).
input Q : f16[32, 1, 128]
input K : f16[32, 128, 4096]
input V : f16[32, 4096, 128]
S = exp(matmul(Q, K) / 8)
O = matmul(S / sum(S, dim=2), V)
output O
