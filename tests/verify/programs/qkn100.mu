# QKNorm over a head dim of 100 (sqrt(100) is -10 in the old fields), scores scaled by 1/10
input Q : f32[1, 4, 100]
input K : f32[1, 100, 8]
input V : f32[1, 8, 4]
Qn = Q / sqrt(sum(sqr(Q), dim=2) / 100)
Kn = K / sqrt(sum(sqr(K), dim=1) / 100)
S = exp(matmul(Qn, Kn) / 10)
O = matmul(S / sum(S, dim=2), V)
output O
