# A matmul read by two kernels (stored once), an elementwise value read by a reduction and an
# output, and an input that is an output.
input X : f16[16, 64]
input W : f16[64, 64]
H = matmul(X, W)
N = H / sqrt(sum(sqr(H), dim=1))
O = matmul(N, W) + H
output O, N, X
