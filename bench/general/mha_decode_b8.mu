# Multi-head attention at decode, 8 sequences x 16 heads of 64, 512 cached positions, scale 1/8.
input Q : f16[128, 1, 64]
input K : f16[128, 64, 512]
input V : f16[128, 512, 64]
S = exp(matmul(Q, K) / 8)
O = matmul(S / sum(S, dim=2), V)
output O
