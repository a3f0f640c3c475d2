# 8 tokens, 2048 -> 2048, f16: the swapped TMA form at n8
input X : f16[8, 2048]
input W : f16[2048, 2048]
O = matmul(X, W)
output O
