# program: tests/verify/programs/negexpbig.mu
# expect: 0
# class: inf
# why: -exp(1000*X) as exp(1000*X) * -1: -inf in both
input X : f32[8, 16]
O = exp(X * 1000) * -1
output O
