input X : f32[16, 32]
input W : f32[32, 16]
O = matmul(X, W) / 9.223371137059149241
output O
