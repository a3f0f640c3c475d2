# Attention over [batch, heads, rows, d] with batch > 1: the ATTN form in one kernel (no split).
input Q : f16[2, 4, 16, 64]
input K : f16[2, 4, 64, 256]
input V : f16[2, 4, 256, 32]
S = exp(matmul(Q, K) / 8)
O = matmul(S / sum(S, dim=3), V)
output O
