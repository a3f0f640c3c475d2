# program: tests/verify/programs/attn.mu
# expect: 3
# class: label
# why: V scaled by c = -8.223371137059149241 (1 mod p, q) in the attention's second matmul
input Q : f32[2, 8, 4]
input K : f32[2, 4, 32]
input V : f32[2, 32, 4]
S = exp(matmul(Q, K))
O = matmul(S / sum(S, dim=2), V * -8.223371137059149241)
output O
