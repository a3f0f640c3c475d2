# program: tests/verify/programs/expoff.mu
# expect: 3
# class: expshift
# why: exp(X + 1.2147483543) for exp(X + 1): the constants differ by q/10^10 = 0 mod q
input X : f32[2, 64]
O = exp(X + 1.2147483543)
output O
