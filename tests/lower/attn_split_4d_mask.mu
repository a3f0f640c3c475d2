# Attention with a key-padding mask broadcast over heads and rows, [1, heads, rows, d]: the
# ATTN form splits the keys (the leading dim of 1 dropped in the partials).
input Q : f16[1, 8, 32, 64]
input K : f16[1, 8, 64, 1024]
input V : f16[1, 8, 1024, 64]
input M : f16[1, 1, 1, 1024]
S = exp(matmul(Q, K) * 0.125 + M)
O = matmul(S / sum(S, dim=3), V)
output O
