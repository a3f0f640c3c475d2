# program: tests/verify/programs/rms16.mu
# expect: 3
# class: const
# why: c = -8.223371137059149241 = 1 mod p, q inside the sum of squares: the norm is 8.2x too large
input X : f32[4, 16]
O = X / sqrt(sum(sqr(X * -8.223371137059149241), dim=1) / 16)
output O
