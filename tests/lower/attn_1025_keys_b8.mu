# a decode step's attention at batch 8: 1025 keys (a cache of 1024 and the new one) tile as 25 x 41,
# its P V split by 5 (folded into the rows at b = 8; into the leading dim of 1 at b = 1)
input q : f16[8, 8, 4, 64]
input K : f16[8, 8, 1025, 64]
input V : f16[8, 8, 1025, 64]
s = matmul(q, transpose(K, perm=[0, 1, 3, 2])) * 0.125
m = max(s, dim=3)
e = exp(s - m)
z = sum(e, dim=3)
a = matmul(e / z, V)
output a
