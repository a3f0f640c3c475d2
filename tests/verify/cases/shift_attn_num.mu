# program: tests/verify/programs/attn.mu
# expect: 3
# class: expshift
# why: attention numerator shifted by 0.2147483543 (0 mod q) inside exp, denominator not
input Q : f32[2, 8, 4]
input K : f32[2, 4, 32]
input V : f32[2, 32, 4]
S = exp(matmul(Q, K))
O = matmul(exp(matmul(Q, K) + 0.2147483543) / sum(S, dim=2), V)
output O
