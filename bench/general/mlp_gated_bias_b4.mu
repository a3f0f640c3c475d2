# Gated SiLU MLP with biases on both projections, 4 tokens (3072 -> 3072).
input X : f16[4, 3072]
input W1 : f16[3072, 3072]
input B1 : f16[3072]
input W2 : f16[3072, 3072]
input B2 : f16[3072]
O = silu(matmul(X, W1) + B1) * (matmul(X, W2) + B2)
output O
