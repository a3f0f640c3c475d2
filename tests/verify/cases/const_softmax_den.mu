# program: tests/verify/programs/smax.mu
# expect: 3
# class: const
# why: denominator scaled by c = -8.223371137059149241 = 1 mod p, q: softmax off by -8.2x
input S : f32[4, 32]
input M : f32[4, 1]
E = exp(S - M)
O = E / (sum(E, dim=1) * -8.223371137059149241)
output O
