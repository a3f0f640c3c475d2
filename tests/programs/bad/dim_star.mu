dim B [1, 64]
input x : f16[B*, 16]
y = exp(x)
output y
