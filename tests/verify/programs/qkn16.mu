input Q : f32[2, 8, 16]
input K : f32[2, 16, 32]
input V : f32[2, 32, 16]
Qn = Q / sqrt(sum(sqr(Q), dim=2) / 16)
Kn = K / sqrt(sum(sqr(K), dim=1) / 16)
S = exp(matmul(Qn, Kn) / 4)
O = matmul(S / sum(S, dim=2), V)
output O
