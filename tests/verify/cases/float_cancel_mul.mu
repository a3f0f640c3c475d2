# program: tests/verify/programs/mulxy.mu
# expect: 5
# class: float
# why: (X + 10^7)*Y - 10^7*Y: f32 rounds X + 10^7 to an integer
input X : f32[8, 16]
input Y : f32[8, 16]
O = (X + 10000000) * Y - Y * 10000000
output O
