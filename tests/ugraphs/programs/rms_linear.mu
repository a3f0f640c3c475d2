# rms_linear: a small program for the μGraph tests
input X : f32[4, 64]
input W : f32[64, 32]
O = matmul(X / sqrt(sum(sqr(X), dim=1) / 64), W)
output O
