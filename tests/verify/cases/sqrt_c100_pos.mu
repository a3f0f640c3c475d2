# program: tests/verify/programs/sqc_100.mu
# expect: 0
# class: sqrt
# why: sqrt(X^2 * 100) as 10*sqrt(X^2) (old fields: sqrt(100) is -10 mod p and -10 mod q)
input X : f32[8, 16]
O = sqrt(sqr(X)) * 10
output O
