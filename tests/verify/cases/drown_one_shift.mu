# program: tests/verify/programs/onebig.mu
# expect: 3
# class: drown
# why: one element Y + 0.5 among 127 elements 10^5 larger: a plain wrong element
input X : f32[127]
input Y : f32[1]
O = reshape(concat(X * 100000, Y + 0.5, dim=0), shape=[8, 16])
output O
