# Multi-query attention at decode: 32 query heads of 128 share one K/V head, 2048 positions.
input Q : f16[1, 32, 128]
input K : f16[1, 128, 2048]
input V : f16[1, 2048, 128]
S = exp(matmul(Q, K) * 0.08838834764831845)
O = matmul(S / sum(S, dim=2), V)
output O
