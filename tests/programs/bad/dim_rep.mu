dim B [1, 64]
input x : f16[B, 16]
y = repeat(x, times=[2, 1])
output y
