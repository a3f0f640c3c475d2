# attention normalised after the product with V; V given as [L, 64], K as [L, 64] (transposed)
dim L [128, 1024]
input q : f32[8, 64]
input k : f32[L, 64]
input v : f32[L, 64]
e = exp(matmul(q, transpose(k, perm=[1, 0])))
o = matmul(e, v) / sum(e, dim=1)
output o
