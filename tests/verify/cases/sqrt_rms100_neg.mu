# program: tests/verify/programs/rms100.mu
# expect: 3
# class: sqrt
# why: RMSNorm over 100 as -10*X/sqrt(sum(X^2)): the negated result (old fields: sqrt(100) is -10 mod p and -10 mod q)
input X : f32[4, 100]
O = X * -10 / sqrt(sum(sqr(X), dim=1))
output O
