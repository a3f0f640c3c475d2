# L2 normalisation of each row, then a projection, 16 tokens (1024 -> 3072).
input X : f16[16, 1024]
input W : f16[1024, 3072]
O = matmul(X / sqrt(sum(sqr(X), dim=1)), W)
output O
