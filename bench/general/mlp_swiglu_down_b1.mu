# LLaMA-7B MLP at decode (1 token): gate and up projections, SiLU gate, down projection.
input X : f16[1, 4096]
input Wg : f16[4096, 11008]
input Wu : f16[4096, 11008]
input Wd : f16[11008, 4096]
O = matmul(silu(matmul(X, Wg)) * matmul(X, Wu), Wd)
output O
