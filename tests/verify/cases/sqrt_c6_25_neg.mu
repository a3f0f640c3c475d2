# program: tests/verify/programs/sqc_6_25.mu
# expect: 3
# class: sqrt
# why: sqrt(X^2 * 6.25) as -2.5*sqrt(X^2): negated (old fields: sqrt(6.25) is -2.5 mod p and -2.5 mod q)
input X : f32[8, 16]
O = sqrt(sqr(X)) * -2.5
output O
