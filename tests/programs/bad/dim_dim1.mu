dim B [1, 64]
input x : f16[32, B]
y = exp(x)
output y
