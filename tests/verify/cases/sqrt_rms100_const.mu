# program: tests/verify/programs/rms100.mu
# expect: 0
# class: sqrt
# why: RMSNorm over 100 as sqrt(100)*X/sqrt(sum(X^2)): sqrt of a constant
input X : f32[4, 100]
O = X * sqrt(100) / sqrt(sum(sqr(X), dim=1))
output O
