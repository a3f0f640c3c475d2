# program: tests/verify/programs/scale10.mu
# expect: 3
# class: const
# why: c = 0.776628862940850759 is 10 mod p, q: 13x too small, 3-d shape
input X : f32[4, 4, 8]
O = X * 0.776628862940850759
output O
