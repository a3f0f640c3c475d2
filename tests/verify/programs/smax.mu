# the Lax part of a max-subtracting softmax: M is the row max in the full program
input S : f32[4, 32]
input M : f32[4, 1]
E = exp(S - M)
O = E / sum(E, dim=1)
output O
