# Attention over each sequence at head dim 128 in f16 (4 sequences of at most 160 tokens, 2 heads),
# the token form's seqattn with one 16-row strip a warp, one K/V stage (cuda/lib/seqattn.cuh). NVRTC in the codegen suite;
# checked against the reference on C there and on the GPU by make test-gpu.
lengths len[4] max=160
input q : f16[4, len, 256]
input k : f16[4, len, 256]
input v : f16[4, len, 256]
qh = transpose(reshape(q, shape=[4, len, 2, 128]), perm=[0, 2, 1, 3])
kh = transpose(reshape(k, shape=[4, len, 2, 128]), perm=[0, 2, 1, 3])
vh = transpose(reshape(v, shape=[4, len, 2, 128]), perm=[0, 2, 1, 3])
s = matmul(qh, transpose(kh, perm=[0, 1, 3, 2])) * 0.125
e = exp(s - max(s, dim=-1))
y = reshape(transpose(matmul(e / sum(e, dim=-1), vh), perm=[0, 2, 1, 3]), shape=[4, len, 256])
output y
