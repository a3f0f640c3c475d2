# Attention over each sequence at head dim 48 in bf16 (5 sequences of at most 130 tokens, 3 heads),
# the token form's seqattn with two strips a warp, an odd count of k-steps (cuda/lib/seqattn.cuh). NVRTC in the codegen suite;
# checked against the reference on C there and on the GPU by make test-gpu.
lengths len[5] max=130
input q : bf16[5, len, 144]
input k : bf16[5, len, 144]
input v : bf16[5, len, 144]
qh = transpose(reshape(q, shape=[5, len, 3, 48]), perm=[0, 2, 1, 3])
kh = transpose(reshape(k, shape=[5, len, 3, 48]), perm=[0, 2, 1, 3])
vh = transpose(reshape(v, shape=[5, len, 3, 48]), perm=[0, 2, 1, 3])
s = matmul(qh, transpose(kh, perm=[0, 1, 3, 2])) * 0.125
e = exp(s - max(s, dim=-1))
y = reshape(transpose(matmul(e / sum(e, dim=-1), vh), perm=[0, 2, 1, 3]), shape=[5, len, 144])
output y
