# GQA decode over a KV length (docs/tuning.md "Reduced dims"): softmax without max, normalised before V
dim L [128, 2048]
input Q : f16[2, 32, 64]
input K : f16[2, 64, L]
input V : f16[2, L, 64]
S = exp(matmul(Q, K) * 0.125)
O = matmul(S / sum(S, dim=2), V)
output O
