# program: tests/verify/programs/rowsum.mu
# expect: 5
# class: float
# why: sum(X + 10^6) - 32*10^6: each term rounded to 1/16, the total to 2
input X : f32[8, 32]
O = sum(X + 1000000, dim=1) - 32000000
output O
