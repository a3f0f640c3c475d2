# program: tests/verify/programs/tempsm.mu
# expect: 0
# class: fieldzero
# why: softmax at temperature 2.147483543 (0 mod q), rewritten as S/T - M/T
input S : f32[4, 32]
input M : f32[4, 1]
E = exp(S / 2.147483543 - M / 2.147483543)
O = E / sum(E, dim=1)
output O
