# program: tests/verify/programs/rms64.mu
# expect: 3
# class: label
# why: norm of c*X with c = -8.223371137059149241 = 1 mod p, q: 8.2x off; only a float test stops it in the old fields
input X : f32[4, 64]
O = X / sqrt(sum(sqr(X * -8.223371137059149241), dim=1) / 64)
output O
