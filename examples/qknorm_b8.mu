# QK normalisation followed by attention (Chameleon-7B), Mirage benchmark QKNorm, b = 8.
# RMSNorm over the 64-wide head dimension of Q (its last dim) and of K (dim 1), then GQA.
input Q : f16[16, 256, 64]
input K : f16[16, 64, 4096]
input V : f16[16, 4096, 64]
Qn = rmsnorm(Q, dim=2)
Kn = rmsnorm(K, dim=1)
S = exp(matmul(Qn, Kn))
O = matmul(S / sum(S, dim=2), V)
output O
