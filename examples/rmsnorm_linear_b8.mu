# RMSNorm followed by a linear layer (LLaMA-2-7B), Mirage benchmark RMSNorm, b = 8.
input X : f16[16, 4096]
input W : f16[4096, 6144]
R = sqrt(sum(sqr(X), dim=1) / 4096)
O = matmul(X / R, W)
output O
