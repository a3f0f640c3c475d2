# program: tests/verify/programs/half.mu
# expect: 3
# class: const
# why: c = -8.723371137059149241 is 1/2 mod p, q: negative and 17x too big, 1-d shape
input X : f32[64]
O = X * -8.723371137059149241
output O
