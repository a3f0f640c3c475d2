# program: tests/verify/programs/cat.mu
# expect: 5
# class: drown
# why: concat((X + 10^7) - 10^7, 10^6*Y): the small half loses all but the integer part in f32
input X : f32[8, 8]
input Y : f32[8, 8]
O = concat(X + 10000000 - 10000000, Y * 1000000, dim=1)
output O
