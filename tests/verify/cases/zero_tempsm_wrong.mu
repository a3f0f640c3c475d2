# program: tests/verify/programs/tempsm.mu
# expect: 3
# class: fieldzero
# why: softmax multiplied by the temperature 2.147483543 (0 mod q) instead of divided: exponent 0 mod q in the old fields
input S : f32[4, 32]
input M : f32[4, 1]
E = exp((S - M) * 2.147483543)
O = E / sum(E, dim=1)
output O
