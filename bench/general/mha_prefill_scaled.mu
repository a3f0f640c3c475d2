# Multi-head attention, 32 heads of 128, 16 queries against 1024 keys, scaled by 1/sqrt(128);
# softmax without the max (as Mirage's attention benchmarks).
input Q : f16[32, 16, 128]
input K : f16[32, 128, 1024]
input V : f16[32, 1024, 128]
S = exp(matmul(Q, K) * 0.08838834764831845)
O = matmul(S / sum(S, dim=2), V)
output O
