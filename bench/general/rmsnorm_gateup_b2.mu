# RMSNorm then the gated half of a SwiGLU MLP, 2 tokens (2048 -> 5632).
input X : f16[2, 2048]
input G : f16[2048]
input Wg : f16[2048, 5632]
input Wu : f16[2048, 5632]
Y = rmsnorm(X, dim=1) * G
O = silu(matmul(Y, Wg)) * matmul(Y, Wu)
output O
