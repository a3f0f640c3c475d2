# program: tests/verify/programs/add2.mu
# expect: 3
# class: const
# why: an extra term 9.223371137059149241*X whose constant is 0 mod p and mod q
input X : f32[8, 16]
input Y : f32[8, 16]
O = X + Y + X * 9.223371137059149241
output O
