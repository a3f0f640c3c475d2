# Residual SiLU MLP block, 8 tokens: O = X + silu(X W1) W2 (1024 -> 4096 -> 1024).
input X : f16[8, 1024]
input W1 : f16[1024, 4096]
input W2 : f16[4096, 1024]
O = X + matmul(silu(matmul(X, W1)), W2)
output O
