# program: tests/verify/programs/one.mu
# expect: 3
# class: expshift
# why: exp(X * 2.147483543) against the constant 1: the exponent is 0 mod q for every X
input X : f32[8, 16]
O = exp(X * 2.147483543)
output O
