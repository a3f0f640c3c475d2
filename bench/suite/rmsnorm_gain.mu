# RMSNorm with eps and gain, 64 rows of 8192.
input X : f16[64, 8192]
input G : f16[8192]
O = X / sqrt(sum(sqr(X), dim=1) / 8192 + 0.000001) * G
output O
