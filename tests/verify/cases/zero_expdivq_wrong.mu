# program: tests/verify/programs/expdivq.mu
# expect: 3
# class: fieldzero
# why: exp(X / 2.147483543 + 0.1): a factor e^0.1 on an exponent that divides by 0 mod q
input X : f32[4, 16]
O = exp(X / 2.147483543 + 0.1)
output O
