# program: tests/verify/programs/divp.mu
# expect: 0
# class: fieldzero
# why: X * 0.5 / 2.1474835435: divisor p/(2*10^9), 0 mod p
input X : f32[8, 16]
O = X * 0.5 / 2.1474835435
output O
