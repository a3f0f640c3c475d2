# program: tests/verify/programs/exp16.mu
# expect: 0
# class: inf
# why: f16 exp(20*X) as exp(10*X) * exp(10*X)
input X : f16[8, 16]
O = exp(X * 10) * exp(X * 10)
output O
