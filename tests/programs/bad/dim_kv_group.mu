dim L [128, 32768]
input k : f16[64, L]
s = sum(k, dim=1, group=2)
output s
