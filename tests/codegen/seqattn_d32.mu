# Attention over each sequence at head dim 32 in bf16 (5 sequences of at most 200 tokens, 3 heads):
# on sm_90a the warpgroup form (cuda/lib/seqattn.cuh, mg_seqattn_wg) with a 4-chunk row. NVRTC in
# the codegen suite; checked against the reference on C there and on the GPU by make test-gpu.
lengths len[5] max=200
input q : bf16[5, len, 96]
input k : bf16[5, len, 96]
input v : bf16[5, len, 96]
qh = transpose(reshape(q, shape=[5, len, 3, 32]), perm=[0, 2, 1, 3])
kh = transpose(reshape(k, shape=[5, len, 3, 32]), perm=[0, 2, 1, 3])
vh = transpose(reshape(v, shape=[5, len, 3, 32]), perm=[0, 2, 1, 3])
s = matmul(qh, transpose(kh, perm=[0, 1, 3, 2])) * 0.17677669
e = exp(s - max(s, dim=-1))
y = reshape(transpose(matmul(e / sum(e, dim=-1), vh), perm=[0, 2, 1, 3]), shape=[5, len, 96])
output y
