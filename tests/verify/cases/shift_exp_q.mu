# program: tests/verify/programs/exp1.mu
# expect: 3
# class: expshift
# why: exp(X + 2.147483543) with the shift = q/10^9 = 0 mod q: e^2.147 = 8.6x
input X : f32[8, 16]
O = exp(X + 2.147483543)
output O
