dim B [1, 64]
lengths len[2] max=8
input x : f16[B, 16]
y = exp(x)
output y
