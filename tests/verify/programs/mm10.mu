input X : f32[16, 32]
input W : f32[32, 16]
O = matmul(X, W) * 10
output O
