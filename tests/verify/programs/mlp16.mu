# LLaMA-like MLP in f16; the output overflows f16 for about half its elements on inputs in [-1, 1)
input X : f16[1, 512]
input W1 : f16[512, 1408]
input W3 : f16[512, 1408]
input W2 : f16[1408, 256]
O = matmul(silu(matmul(X, W1)) * matmul(X, W3), W2) * 100
output O
