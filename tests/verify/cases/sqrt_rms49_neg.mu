# program: tests/verify/programs/rms49.mu
# expect: 3
# class: sqrt
# why: RMSNorm over 49 as -7*X/sqrt(sum(X^2)): the negated result (old fields: sqrt(49) is +7 mod p and -7 mod q)
input X : f32[4, 49]
O = X * -7 / sqrt(sum(sqr(X), dim=1))
output O
