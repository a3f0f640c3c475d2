# program: tests/verify/programs/ident.mu
# expect: 3
# class: const
# why: c = -8.223371137059149241 is 1 mod p and mod q (c = 1 - pq/10^18): X vs c*X, a real error of 9.2x
input X : f32[8, 16]
O = X * -8.223371137059149241
output O
