# RMSNorm of queries and keys over the head dim, then attention: 8 heads of 128, 64 queries,
# 1024 keys.
input Q : f16[8, 64, 128]
input K : f16[8, 128, 1024]
input V : f16[8, 1024, 128]
S = exp(matmul(rmsnorm(Q, dim=2), rmsnorm(K, dim=1)) * 0.08838834764831845)
O = matmul(S / sum(S, dim=2), V)
output O
