# program: tests/verify/programs/shift3.mu
# expect: 3
# class: const
# why: additive c = -6.223371137059149241 is 3 mod p, q: X + c is X + 3 - 9.2
input X : f32[8, 16]
O = X + -6.223371137059149241
output O
