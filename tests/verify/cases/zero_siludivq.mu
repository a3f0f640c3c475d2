# program: tests/verify/programs/siludivq.mu
# expect: 0
# class: fieldzero
# why: silu(X / 2.147483543) (0 mod q) rewritten as silu(X * 2 / 2q/10^9)
input X : f32[4, 32]
O = silu(X * 2 / 4.294967086) * X
output O
