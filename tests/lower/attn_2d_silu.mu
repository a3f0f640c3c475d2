# Attention-like: a 2-dim O = (E / rowsum(E)) V with E = exp(silu(Q K)), odd sizes.
input Q : f16[24, 64]
input K : f16[64, 96]
input V : f16[96, 48]
S = exp(silu(matmul(Q, K)))
O = matmul(S / sum(S, dim=1), V)
output O
