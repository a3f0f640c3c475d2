# lora: a small program for the μGraph tests
input X : f32[4, 16]
input W : f32[16, 32]
input A : f32[16, 4]
input B : f32[4, 32]
O = matmul(X, W) + matmul(matmul(X, A), B)
output O
