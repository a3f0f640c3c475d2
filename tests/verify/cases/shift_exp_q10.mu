# program: tests/verify/programs/exp1.mu
# expect: 3
# class: expshift
# why: exp(X + 0.2147483543) = q/10^10: a factor 1.24
input X : f32[8, 16]
O = exp(X + 0.2147483543)
output O
