# program: tests/verify/programs/sqc_2_25.mu
# expect: 3
# class: sqrt
# why: sqrt(X^2 * 2.25) as -1.5*sqrt(X^2): negated (old fields: sqrt(2.25) is +1.5 mod p and +1.5 mod q)
input X : f32[8, 16]
O = sqrt(sqr(X)) * -1.5
output O
