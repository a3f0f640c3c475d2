# program: tests/verify/programs/smax.mu
# expect: 0
# class: expshift
# why: shift 2.147483543 (0 mod q) in numerator and denominator: cancels over the reals, equivalent
input S : f32[4, 32]
input M : f32[4, 1]
E = exp(S - M + 2.147483543)
O = E / sum(E, dim=1)
output O
