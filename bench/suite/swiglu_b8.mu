# LLaMA SwiGLU feed-forward, 8 tokens (2048 -> 8192 -> 2048): (silu(X W1) * (X W3)) W2.
input X : f16[8, 2048]
input W1 : f16[2048, 8192]
input W3 : f16[2048, 8192]
input W2 : f16[8192, 2048]
O = matmul(silu(matmul(X, W1)) * matmul(X, W3), W2)
output O
