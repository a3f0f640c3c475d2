# program: tests/verify/programs/onebig.mu
# expect: 3
# class: drown
# why: one element Y*c with c = -8.223371137059149241 = 1 mod p, q among 127 elements 10^5 larger
input X : f32[127]
input Y : f32[1]
O = reshape(concat(X * 100000, Y * -8.223371137059149241, dim=0), shape=[8, 16])
output O
