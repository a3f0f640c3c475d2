# program: tests/verify/programs/exp1.mu
# expect: 3
# class: const
# why: exp(c*X) with c = -8.223371137059149241 = 1 mod q: exp reads only the q part
input X : f32[8, 16]
O = exp(X * -8.223371137059149241)
output O
