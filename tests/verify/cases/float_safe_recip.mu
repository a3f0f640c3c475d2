# program: tests/verify/programs/smax.mu
# expect: 0
# class: float
# why: E * (1 / sum(E)): the same softmax, no cancellation
input S : f32[4, 32]
input M : f32[4, 1]
E = exp(S - M)
O = E * (1 / sum(E, dim=1))
output O
