# program: tests/verify/programs/smax.mu
# expect: 0
# class: float
# why: exp(S - M - 1): a harmless shift, safe counterpart of the -100/-200 cases
input S : f32[4, 32]
input M : f32[4, 1]
E = exp(S - M - 1)
O = E / sum(E, dim=1)
output O
