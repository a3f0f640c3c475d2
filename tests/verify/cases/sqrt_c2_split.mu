# program: tests/verify/programs/sqc_2.mu
# expect: 0
# class: sqrt
# why: sqrt(2*X^2 + 1) as sqrt(2)*sqrt(X^2 + 0.5): sqrt of a non-square constant
input X : f32[8, 16]
O = sqrt(2) * sqrt(sqr(X) + 0.5)
output O
