dim B [1, 64]
input x : f16[B, 32]
c = concat(x, x, dim=0)
output c
