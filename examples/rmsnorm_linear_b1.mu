# RMSNorm followed by a linear layer (LLaMA-2-7B), Mirage benchmark RMSNorm, b = 1.
input X : f16[2, 4096]
input W : f16[4096, 6144]
R = sqrt(sum(sqr(X), dim=1) / 4096)
O = matmul(X / R, W)
output O
