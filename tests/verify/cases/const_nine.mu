# program: tests/verify/programs/nine.mu
# expect: 3
# class: const
# why: c = -0.223371137059149241 is 9 mod p, q: 40x too small, negated
input X : f32[8, 16]
O = X * -0.223371137059149241
output O
