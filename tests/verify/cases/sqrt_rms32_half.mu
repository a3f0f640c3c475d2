# program: tests/verify/programs/rms32.mu
# expect: 0
# class: sqrt
# why: RMSNorm over 32 (not a square) as 4*X/sqrt(sum(X^2)/2)
input X : f32[4, 32]
O = X * 4 / sqrt(sum(sqr(X), dim=1) / 2)
output O
