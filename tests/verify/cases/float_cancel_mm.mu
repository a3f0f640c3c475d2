# program: tests/verify/programs/mm.mu
# expect: 5
# class: float
# why: matmul(X + 10^6, W) - 10^6 * colsum(W): exact over the reals, percent errors in f32
input X : f32[16, 32]
input W : f32[32, 16]
O = matmul(X + 1000000, W) - sum(W, dim=0) * 1000000
output O
