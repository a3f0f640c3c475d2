# Multi-head attention at decode, 8 sequences: 8 x 32 heads of 128, one query each, 1024 keys
# (issue #26 item 2's MHA b=8).
input Q : f16[256, 1, 128]
input K : f16[256, 128, 1024]
input V : f16[256, 1024, 128]
S = exp(matmul(Q, K) / 8)
O = matmul(S / sum(S, dim=2), V)
output O
