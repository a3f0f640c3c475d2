# A SiLU MLP with its residual add, 16 tokens (1024 -> 4096 -> 1024).
input X : f16[16, 1024]
input W1 : f16[1024, 4096]
input W2 : f16[4096, 1024]
O = X + matmul(silu(matmul(X, W1)), W2)
output O
