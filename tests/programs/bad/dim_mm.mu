dim B [1, 64]
input x : f16[B, 32]
input y : f16[B, 32]
t = transpose(x, perm=[1, 0])
m = matmul(t, y)
output m
