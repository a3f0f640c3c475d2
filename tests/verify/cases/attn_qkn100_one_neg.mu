# program: tests/verify/programs/qkn100.mu
# expect: 3
# class: attention
# why: QKNorm over 100 with only Q's norm negated: the scores change sign
input Q : f32[1, 4, 100]
input K : f32[1, 100, 8]
input V : f32[1, 8, 4]
Qn = Q * -10 / sqrt(sum(sqr(Q), dim=2))
Kn = K / sqrt(sum(sqr(K), dim=1) / 100)
S = exp(matmul(Qn, Kn) / 10)
O = matmul(S / sum(S, dim=2), V)
output O
