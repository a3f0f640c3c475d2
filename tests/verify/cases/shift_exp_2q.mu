# program: tests/verify/programs/exp1.mu
# expect: 3
# class: expshift
# why: exp(X + 4.294967086) = 2q/10^9: a factor 73
input X : f32[8, 16]
O = exp(X + 4.294967086)
output O
