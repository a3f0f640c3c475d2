# program: tests/verify/programs/add2.mu
# expect: 3
# class: const
# why: c = -921.3371137059149241 (1 - pq/10^16) is 1 mod p, q, scaling one addend
input X : f32[8, 16]
input Y : f32[8, 16]
O = X + Y * -921.3371137059149241
output O
