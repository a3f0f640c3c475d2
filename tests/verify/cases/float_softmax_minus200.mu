# program: tests/verify/programs/smax.mu
# expect: 5
# class: float
# why: exp(S - M - 200): every term underflows f32 to 0 for |S - M| < 100, so 0/0
input S : f32[4, 32]
input M : f32[4, 1]
E = exp(S - M - 200)
O = E / sum(E, dim=1)
output O
