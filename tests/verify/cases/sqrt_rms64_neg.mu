# program: tests/verify/programs/rms64.mu
# expect: 3
# class: sqrt
# why: RMSNorm over 64 as -8*X/sqrt(sum(X^2)): the negated result (old fields: sqrt(64) is +8 mod p and +8 mod q)
input X : f32[4, 64]
O = X * -8 / sqrt(sum(sqr(X), dim=1))
output O
