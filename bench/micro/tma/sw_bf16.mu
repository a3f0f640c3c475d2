# 16 tokens, 2048 -> 4096, bf16: the swapped TMA form
input X : bf16[16, 2048]
input W : bf16[2048, 4096]
O = matmul(X, W)
output O
