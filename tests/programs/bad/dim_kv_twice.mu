dim L [128, 32768]
input k : f16[64, L * 2]
s = sum(k, dim=1)
output s
