# Two-layer ReLU MLP with biases, 32 tokens (1024 -> 4096 -> 1024); ReLU is outside the
# search's vocabulary, so the program is searched piece by piece.
input X : f16[32, 1024]
input W1 : f16[1024, 4096]
input B1 : f16[4096]
input W2 : f16[4096, 1024]
input B2 : f16[1024]
O = matmul(relu(matmul(X, W1) + B1), W2) + B2
output O
