# program: tests/verify/programs/var.mu
# expect: 0
# class: float
# why: variance as mean of squared deviations with 0.03125 for 1/32
input X : f32[4, 32]
C = X - sum(X, dim=1) * 0.03125
O = sum(sqr(C), dim=1) * 0.03125
output O
