dim L [128, 32768]
input k : f16[64, L]
n = rmsnorm(k)
output n
