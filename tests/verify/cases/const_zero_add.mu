# program: tests/verify/programs/ident.mu
# expect: 3
# class: const
# why: adds c = 9.223371137059149241 = pq/10^18, which is 0 mod p and mod q
input X : f32[8, 16]
O = X + 9.223371137059149241
output O
