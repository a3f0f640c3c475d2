# program: tests/verify/programs/divp.mu
# expect: 0
# class: fieldzero
# why: X / 4.294967087 against itself: the divisor is 0 mod p (a field zero, not a real one)
input X : f32[8, 16]
O = X / 4.294967087
output O
