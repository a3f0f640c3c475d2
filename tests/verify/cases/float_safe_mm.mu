# program: tests/verify/programs/mm.mu
# expect: 0
# class: float
# why: matmul(X * 2, W) / 2: exact in binary floating point
input X : f32[16, 32]
input W : f32[32, 16]
O = matmul(X * 2, W) / 2
output O
