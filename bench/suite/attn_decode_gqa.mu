# Decode-step attention with grouped queries: 8 KV heads of 64, 4 query heads each, a cache of
# 2048 positions; max-subtracting softmax.
input Q : f16[8, 4, 64]
input K : f16[8, 64, 2048]
input V : f16[8, 2048, 64]
S = matmul(Q, K) * 0.125
E = exp(S - max(S, dim=2))
O = matmul(E / sum(E, dim=2), V)
output O
