# program: tests/verify/programs/expdivq.mu
# expect: 0
# class: fieldzero
# why: exp(X / 2.147483543) against itself: the exponent divides by 0 mod q
input X : f32[4, 16]
O = exp(X / 2.147483543)
output O
