# Two-layer ReLU MLP at decode size (16 tokens, 2048 -> 8192 -> 2048).
input X : f16[16, 2048]
input W1 : f16[2048, 8192]
input W2 : f16[8192, 2048]
O = matmul(relu(matmul(X, W1)), W2)
output O
