# program: tests/verify/programs/rms32.mu
# expect: 0
# class: sqrt
# why: RMSNorm over 32 as X/sqrt(sum(X^2) * 0.03125)
input X : f32[4, 32]
O = X / sqrt(sum(sqr(X), dim=1) * 0.03125)
output O
