# Grouped-query attention with an additive mask shared by the heads (0 or large negative),
# 8 KV heads, 32 query rows each, 2048 keys, scale 1/8.
input Q : f16[8, 32, 64]
input K : f16[8, 64, 2048]
input V : f16[8, 2048, 64]
input M : f16[1, 32, 2048]
S = exp(matmul(Q, K) * 0.125 + M)
O = matmul(S / sum(S, dim=2), V)
output O
