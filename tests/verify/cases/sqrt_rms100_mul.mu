# program: tests/verify/programs/rms100.mu
# expect: 0
# class: sqrt
# why: RMSNorm over 100 as X/sqrt(sum(X^2) * 0.01): the same root
input X : f32[4, 100]
O = X / sqrt(sum(sqr(X), dim=1) * 0.01)
output O
