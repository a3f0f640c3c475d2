# program: tests/verify/programs/exp1.mu
# expect: 3
# class: expshift
# why: exp(X - 2.147483543): the shift is 0 mod q, a factor 1/8.6
input X : f32[8, 16]
O = exp(X - 2.147483543)
output O
