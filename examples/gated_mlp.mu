# Gated MLP (Falcon-7B), Mirage benchmark GatedMLP: O = silu(X W1) * (X W2).
input X : f16[8, 4096]
input W1 : f16[4096, 4096]
input W2 : f16[4096, 4096]
O = silu(matmul(X, W1)) * matmul(X, W2)
output O
