# program: tests/verify/programs/cat.mu
# expect: 3
# class: drown
# why: concat(c*X, 10^6*Y) with c = -8.223371137059149241 = 1 mod p, q: the wrong half is 10^6 times smaller
input X : f32[8, 8]
input Y : f32[8, 8]
O = concat(X * -8.223371137059149241, Y * 1000000, dim=1)
output O
