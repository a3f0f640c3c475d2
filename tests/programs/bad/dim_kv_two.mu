dim L [128, 32768]
dim B [1, 8]
input k : f16[B, 64, L]
s = sum(k, dim=2)
output s
