# no numeric literals anywhere
input X : f16[4, 16]
input Y : f16[4, 16]
input W : f16[16, 16]
G = silu(matmul(X, W)) * matmul(Y, W)
H = G / sqrt(sum(sqr(G), dim=1))
output H
