# LLaMA-3.2-1B MLP, 16 tokens: SwiGLU with its down projection (2048 -> 8192 -> 2048).
input X : f16[16, 2048]
input Wg : f16[2048, 8192]
input Wu : f16[2048, 8192]
input Wd : f16[8192, 2048]
O = matmul(silu(matmul(X, Wg)) * matmul(X, Wu), Wd)
output O
