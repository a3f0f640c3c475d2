# A ragged attention whose Q is scaled and whose K is Q's projection unscaled, which another
# operator reads too: stored f16 all the same (a product operand of 64+ rows, opt/buffers.c),
# so seqattn's operands load by cp.async (tests/codegen/run.sh, make test-gpu).
lengths len[4] max=40
input x : f16[4, len, 32]
input wq : f16[1, 32, 32]
input wv : f16[1, 32, 32]
q = transpose(reshape(matmul(x, wq), shape=[4, len, 2, 16]), perm=[0, 2, 1, 3])
v = transpose(reshape(matmul(x, wv), shape=[4, len, 2, 16]), perm=[0, 2, 1, 3])
s = matmul(q, transpose(q, perm=[0, 1, 3, 2])) * 0.25
e = exp(s - max(s, dim=-1))
a = reshape(transpose(matmul(e / sum(e, dim=-1), v), perm=[0, 2, 1, 3]), shape=[4, len, 32])
y = a + x
output y
