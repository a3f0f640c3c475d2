input X : f32[4, 32]
input W1 : f32[32, 32]
input W2 : f32[32, 32]
O = silu(matmul(X, W1)) * matmul(X, W2)
output O
