# ragged_attention.mu in f32: the GPU's seqattn (16-bit tensor cores) refuses it by name; the C
# backend runs it against the per-sequence reference (codegen suite).
lengths len[4] max=40
input x : f32[4, len, 32]
input wq : f32[1, 32, 32]
input wv : f32[1, 32, 32]
q = transpose(reshape(matmul(x, wq), shape=[4, len, 2, 16]), perm=[0, 2, 1, 3])
v = transpose(reshape(matmul(x, wv), shape=[4, len, 2, 16]), perm=[0, 2, 1, 3])
s = matmul(q, transpose(q, perm=[0, 1, 3, 2])) * 0.25
e = exp(s - max(s, dim=-1))
a = reshape(transpose(matmul(e / sum(e, dim=-1), v), perm=[0, 2, 1, 3]), shape=[4, len, 32])
y = a + x
output y
