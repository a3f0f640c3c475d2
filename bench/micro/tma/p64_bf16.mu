# 128 tokens, 1024 -> 4096, bf16: 64-column tiles on TMA
input X : bf16[128, 1024]
input W : bf16[1024, 4096]
O = matmul(X, W)
output O
