# program: tests/verify/programs/sqc_2.mu
# expect: 3
# class: sqrt
# why: sqrt(2*X^2 + 1) as sqrt(2)*sqrt(X^2 + 1): wrong inside the root
input X : f32[8, 16]
O = sqrt(2) * sqrt(sqr(X) + 1)
output O
