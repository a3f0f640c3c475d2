# program: tests/verify/programs/expbig.mu
# expect: 0
# class: inf
# why: exp(500*X + 500*X): +inf where the program is +inf
input X : f32[8, 16]
O = exp(X * 500 + X * 500)
output O
