# program: tests/verify/programs/silu1.mu
# expect: 3
# class: const
# why: silu(c*X) with c = -8.223371137059149241 = 1 mod p and mod q: both parts of silu agree in the old fields
input X : f32[4, 32]
O = silu(X * -8.223371137059149241)
output O
