# program: tests/verify/programs/sqc_0_01.mu
# expect: 0
# class: sqrt
# why: sqrt(X^2 * 0.01) as 0.1*sqrt(X^2) (old fields: sqrt(0.01) is -0.1 mod p and -0.1 mod q)
input X : f32[8, 16]
O = sqrt(sqr(X)) * 0.1
output O
