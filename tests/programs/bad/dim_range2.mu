dim B [9, 4]
input x : f16[B, 16]
y = exp(x)
output y
