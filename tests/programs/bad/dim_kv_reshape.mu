dim L [128, 32768]
input k : f16[64, L]
r = reshape(k, shape=[L, 64])
output r
