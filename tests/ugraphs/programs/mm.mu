# mm: a small program for the μGraph tests
input X : f32[64, 64]
input W : f32[64, 64]
O = matmul(X, W)
output O
