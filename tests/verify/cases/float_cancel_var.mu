# program: tests/verify/programs/var.mu
# expect: 5
# class: float
# why: variance as E[(X+10^4)^2] - E[X+10^4]^2: shift-invariant over the reals, f32 loses it (ulp of 10^8 is 8)
input X : f32[4, 32]
Y = X + 10000
O = sum(sqr(Y), dim=1) / 32 - sqr(sum(Y, dim=1) / 32)
output O
