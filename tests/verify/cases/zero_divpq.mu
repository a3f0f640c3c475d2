# program: tests/verify/programs/divpq.mu
# expect: 0
# class: fieldzero
# why: (X * 2) / (9.223371137059149241 * 2): divisor 0 mod p and mod q
input X : f32[4, 8]
O = (X * 2) / (9.223371137059149241 * 2)
output O
