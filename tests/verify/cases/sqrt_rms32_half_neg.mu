# program: tests/verify/programs/rms32.mu
# expect: 3
# class: sqrt
# why: RMSNorm over 32 as -4*X/sqrt(sum(X^2)/2): negated
input X : f32[4, 32]
O = X * -4 / sqrt(sum(sqr(X), dim=1) / 2)
output O
