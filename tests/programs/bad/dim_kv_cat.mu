dim L [128, 32768]
input k : f16[64, L]
c = concat(k, k, dim=1)
s = sum(c, dim=1)
output s
