dim B [1, 64]
input x : f16[2*B, 16]
m = max(x, dim=1)
y = x - m
output y
