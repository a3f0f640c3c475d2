# program: tests/verify/programs/expbig.mu
# expect: 0
# class: inf
# why: exp(1000*X) against itself: +inf wherever X > 0.0888, in both
input X : f32[8, 16]
O = exp(X * 1000)
output O
