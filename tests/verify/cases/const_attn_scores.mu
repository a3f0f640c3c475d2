# program: tests/verify/programs/attn.mu
# expect: 3
# class: const
# why: scores scaled by c = -8.223371137059149241 = 1 mod q inside exp: a different softmax
input Q : f32[2, 8, 4]
input K : f32[2, 4, 32]
input V : f32[2, 32, 4]
S = exp(matmul(Q, K) * -8.223371137059149241)
O = matmul(S / sum(S, dim=2), V)
output O
