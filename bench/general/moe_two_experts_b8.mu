# Two SiLU experts mixed by per-token gate weights (a dense MoE layer), 8 tokens (1024 -> 2048
# -> 1024).
input X : f16[8, 1024]
input P1 : f16[8, 1]
input P2 : f16[8, 1]
input A1 : f16[1024, 2048]
input B1 : f16[2048, 1024]
input A2 : f16[1024, 2048]
input B2 : f16[2048, 1024]
O = P1 * matmul(silu(matmul(X, A1)), B1) + P2 * matmul(silu(matmul(X, A2)), B2)
output O
