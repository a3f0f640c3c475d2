# Normalized Transformer update (nGPT-1B), Mirage benchmark nTrans, b = 1.
# O = rms(X + alpha * rms(H - X)), rms = RMSNorm over the hidden dimension.
input X : f16[1, 4096]
input H : f16[1, 4096]
input alpha : f16[1, 4096]
O = rmsnorm(X + alpha * rmsnorm(H - X, dim=1), dim=1)
output O
