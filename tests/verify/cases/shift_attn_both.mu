# program: tests/verify/programs/attn.mu
# expect: 0
# class: expshift
# why: scores shifted by 0.2147483543 (0 mod q) in every exp term: the softmax is unchanged
input Q : f32[2, 8, 4]
input K : f32[2, 4, 32]
input V : f32[2, 32, 4]
S = exp(matmul(Q, K) + 0.2147483543)
O = matmul(S / sum(S, dim=2), V)
output O
