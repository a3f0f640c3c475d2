# RMSNorm with a gain, then a fused QKV-sized projection, 4 tokens (2048 -> 6144).
input X : f16[4, 2048]
input G : f16[2048]
input W : f16[2048, 6144]
O = matmul(rmsnorm(X, dim=1) * G, W)
output O
