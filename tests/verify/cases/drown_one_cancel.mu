# program: tests/verify/programs/onebig.mu
# expect: 5
# class: drown
# why: one element (Y + 10^7) - 10^7 among 127 elements 10^5 larger: f32 keeps only its integer part
input X : f32[127]
input Y : f32[1]
O = reshape(concat(X * 100000, Y + 10000000 - 10000000, dim=0), shape=[8, 16])
output O
