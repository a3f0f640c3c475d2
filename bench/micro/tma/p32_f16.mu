# 128 tokens, 1024 -> 1024 with a ReLU: the lowering's 32-column tiles (TMA with 64-byte rows)
input X : f16[128, 1024]
input W : f16[1024, 1024]
O = relu(matmul(X, W))
output O
