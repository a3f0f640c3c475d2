# program: tests/verify/programs/divp.mu
# expect: 3
# class: fieldzero
# why: X / 4.294967088 against X / 4.294967087: relative difference 2.3e-10, invisible to floats, not equal
input X : f32[8, 16]
O = X / 4.294967088
output O
