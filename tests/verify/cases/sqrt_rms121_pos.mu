# program: tests/verify/programs/rms121.mu
# expect: 0
# class: sqrt
# why: RMSNorm over 121 as 11*X/sqrt(sum(X^2)): equal over the reals (old fields: sqrt(121) is -11 mod p and +11 mod q)
input X : f32[2, 121]
O = X * 11 / sqrt(sum(sqr(X), dim=1))
output O
