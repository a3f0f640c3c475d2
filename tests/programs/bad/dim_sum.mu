dim B [1, 64]
input x : f16[B, 32]
s = sum(x, dim=0)
output s
