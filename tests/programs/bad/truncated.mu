# gated MLP, cut off mid-statement
input X : f16[8, 64]
input W1 : f16[64, 64]
input W2 : f16[64, 64]
O = silu(matmul(X, W1)) * matmul(X, W