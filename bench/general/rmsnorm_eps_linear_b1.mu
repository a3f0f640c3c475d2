# RMSNorm written out with eps and gain, then a projection, 1 token (4096 -> 4096).
input X : f16[1, 4096]
input G : f16[4096]
input W : f16[4096, 4096]
Y = X / sqrt(sum(sqr(X), dim=1) / 4096 + 0.000001) * G
O = matmul(Y, W)
output O
