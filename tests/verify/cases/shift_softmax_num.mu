# program: tests/verify/programs/smax.mu
# expect: 3
# class: expshift
# why: numerator shifted by 2.147483543 (0 mod q), denominator not: softmax 8.6x too large
input S : f32[4, 32]
input M : f32[4, 1]
O = exp(S - M + 2.147483543) / sum(exp(S - M), dim=1)
output O
