# LayerNorm (mean subtracted, eps, gain, bias) before a projection, 8 tokens (2048 -> 2048).
input X : f16[8, 2048]
input G : f16[2048]
input B : f16[2048]
input W : f16[2048, 2048]
D = X - sum(X, dim=1) / 2048
Y = D / sqrt(sum(sqr(D), dim=1) / 2048 + 0.00001) * G + B
O = matmul(Y, W)
output O
