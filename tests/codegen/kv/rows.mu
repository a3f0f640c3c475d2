# the length in dim 0 and summed over it (not a batch of rows)
dim L [128, 2048]
input x : f32[L, 96]
input w : f32[96, 32]
y = silu(matmul(x, w))
s = sum(y * y, dim=0)
output s
