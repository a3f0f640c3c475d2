# Layout operators stay kernel-level operators; the kernels around them read their results.
input X : f16[8, 64]
input W : f16[64, 32]
T = reshape(matmul(X, W), shape=[4, 2, 32])
U = repeat(T, times=[1, 2, 1])
V = concat(U, U, dim=2)
O = relu(V) + 1
output O, T
