# CRLF line endings
input X : f16[2, 8]
input W : f16[8, 4]
Y = matmul(X, W) + 1
output Y
