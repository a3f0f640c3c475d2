# program: tests/verify/programs/qkn100.mu
# expect: 3
# class: attention
# why: QKNorm over 100 with K normalised over the keys (dim 2) instead of the head dim
input Q : f32[1, 4, 100]
input K : f32[1, 100, 8]
input V : f32[1, 8, 4]
Qn = Q / sqrt(sum(sqr(Q), dim=2) / 100)
Kn = K / sqrt(sum(sqr(K), dim=2) / 8)
S = exp(matmul(Qn, Kn) / 10)
O = matmul(S / sum(S, dim=2), V)
output O
