# program: tests/verify/programs/rmsdivp.mu
# expect: 0
# class: fieldzero
# why: mean of squares over a divisor 4.294967087 (0 mod p), rewritten with 0.25 and p/(4*10^9)
input X : f32[4, 16]
O = X / sqrt(sum(sqr(X), dim=1) * 0.25 / 1.07374177175)
output O
