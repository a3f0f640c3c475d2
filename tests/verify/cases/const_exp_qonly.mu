# program: tests/verify/programs/exp1.mu
# expect: 3
# class: const
# why: exp(c*X) with c = 3.147483543 = 1 mod q but not mod p: exp reads only the q part
input X : f32[8, 16]
O = exp(X * 3.147483543)
output O
