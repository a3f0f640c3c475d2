# Gated MLP (Falcon-7B sizes) over a batch of B tokens, B given per call (a symbolic dim,
# docs/tuning.md): O = silu(X W1) * (X W2).
dim B [1, 512]
input X : f16[B, 4096]
input W1 : f16[4096, 4096]
input W2 : f16[4096, 4096]
O = silu(matmul(X, W1)) * matmul(X, W2)
output O
