# program: tests/verify/programs/expdivq.mu
# expect: 0
# class: fieldzero
# why: exp(X * 0.5 / 1.0737417715): divisor q/(2*10^9), 0 mod q
input X : f32[4, 16]
O = exp(X * 0.5 / 1.0737417715)
output O
