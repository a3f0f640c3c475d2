# Two-layer SiLU MLP, 8 tokens (2048 -> 8192 -> 2048), no gate.
input X : f16[8, 2048]
input W1 : f16[2048, 8192]
input W2 : f16[8192, 2048]
O = matmul(silu(matmul(X, W1)), W2)
output O
