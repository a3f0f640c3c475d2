# program: tests/verify/programs/rms25.mu
# expect: 0
# class: sqrt
# why: RMSNorm over 25 as 5*X/sqrt(sum(X^2)): equal over the reals (old fields: sqrt(25) is -5 mod p and -5 mod q)
input X : f32[2, 25]
O = X * 5 / sqrt(sum(sqr(X), dim=1))
output O
