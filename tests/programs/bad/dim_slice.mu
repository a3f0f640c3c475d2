dim B [1, 64]
input x : f16[B, 16]
y = slice(x, dim=0, start=0, len=1)
output y
