# program: tests/verify/programs/mm.mu
# expect: 3
# class: const
# why: c = -91.23371137059149241 (1 - pq/10^17) is 1 mod p, q, scaling X inside a matmul
input X : f32[16, 32]
input W : f32[32, 16]
O = matmul(X * -91.23371137059149241, W)
output O
