dim B [1, 64]
input x : f16[32, 16]
y = exp(x)
output y
