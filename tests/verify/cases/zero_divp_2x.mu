# program: tests/verify/programs/divp.mu
# expect: 0
# class: fieldzero
# why: (X + X) / 8.589934174: both divisors 0 mod p, equal over the reals
input X : f32[8, 16]
O = (X + X) / 8.589934174
output O
