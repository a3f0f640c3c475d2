dim L [128, 32768]
input q : f16[4, 64]
input k : f16[64, L]
m = max(matmul(q, k), dim=1)
output m
