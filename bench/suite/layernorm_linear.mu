# LayerNorm (mean-subtracting, eps, gain and bias) followed by a linear layer, 32 tokens.
input X : f16[32, 4096]
input G : f16[4096]
input B : f16[4096]
input W : f16[4096, 4096]
D = X - sum(X, dim=1) / 4096
Y = D / sqrt(sum(sqr(D), dim=1) / 4096 + 0.00001) * G + B
O = matmul(Y, W)
output O
