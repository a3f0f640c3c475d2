# SwiGLU feed-forward at prefill size: 128 tokens, 1024 -> 4096 -> 1024.
input X : f16[128, 1024]
input W1 : f16[1024, 4096]
input W3 : f16[1024, 4096]
input W2 : f16[4096, 1024]
O = matmul(silu(matmul(X, W1)) * matmul(X, W3), W2)
output O
