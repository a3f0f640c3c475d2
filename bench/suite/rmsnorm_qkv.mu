# RMSNorm with eps and gain, then a fused QKV projection (4 tokens, 4096 -> 6144).
input X : f16[4, 4096]
input G : f16[4096]
input W : f16[4096, 6144]
Y = X / sqrt(sum(sqr(X), dim=1) / 4096 + 0.000001) * G
O = matmul(Y, W)
output O
