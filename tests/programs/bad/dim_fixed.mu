dim B [1, 64]
input x : f16[B, 16]
input y : f16[64, 16]
z = x + y
output z
