# program: tests/verify/programs/smax.mu
# expect: 5
# class: float
# why: exp(S + 3M): overflows (M around +30) or underflows to 0/0 (M around -30) at magnitudes of tens
input S : f32[4, 32]
input M : f32[4, 1]
E = exp(S + M * 3)
O = E / sum(E, dim=1)
output O
