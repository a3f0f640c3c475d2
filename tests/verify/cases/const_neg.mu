# program: tests/verify/programs/neg.mu
# expect: 3
# class: const
# why: c = 8.223371137059149241 is -1 mod p, q: 8.2x with the wrong sign
input X : f32[2, 32]
O = X * 8.223371137059149241
output O
