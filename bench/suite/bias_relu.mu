# A linear layer with bias and ReLU, 128 rows (1024 -> 4096).
input X : f16[128, 1024]
input W : f16[1024, 4096]
input Bias : f16[4096]
O = relu(matmul(X, W) + Bias)
output O
