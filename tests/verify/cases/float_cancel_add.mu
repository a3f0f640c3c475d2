# program: tests/verify/programs/ident.mu
# expect: 5
# class: float
# why: (X + 10^7) - 10^7: f32 keeps only the integer part of X
input X : f32[8, 16]
O = X + 10000000 - 10000000
output O
