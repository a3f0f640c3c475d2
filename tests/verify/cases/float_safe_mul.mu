# program: tests/verify/programs/mulxy.mu
# expect: 0
# class: float
# why: Y * X for X * Y
input X : f32[8, 16]
input Y : f32[8, 16]
O = Y * X
output O
