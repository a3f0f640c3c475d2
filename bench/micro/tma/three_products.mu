# Three products of one X in one kernel: six moving tiles, over the tensor maps a TMA loop may
# take (OP_MAX_TMA_TILES), so it stays on cp.async and mma.sync
input X : f16[128, 1024]
input W1 : f16[1024, 4096]
input W2 : f16[1024, 4096]
input W3 : f16[1024, 4096]
O = matmul(X, W1) * matmul(X, W2) + matmul(X, W3)
output O
