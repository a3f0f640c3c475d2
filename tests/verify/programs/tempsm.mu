input S : f32[4, 32]
input M : f32[4, 1]
E = exp((S - M) / 2.147483543)
O = E / sum(E, dim=1)
output O
