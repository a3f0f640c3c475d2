# program: examples/qknorm_b1.mu
# QKNorm b=1 (examples/qknorm_b1.mu) fused into GQA's 64-way split of the keys with two grid
# dims (examples/ugraphs/qknorm_b1.mu uses three): its tiles sum to 264 KB, more than a block may
# have, but fewer are live at once (at most 104 KB by ir_block_smem) and the planner places them in
# 158720 bytes. Admitted since the IR checker counts the live tiles.
input Q : f16[2, 256, 64]
input K : f16[2, 64, 4096]
input V : f16[2, 4096, 64]
P, D = kernel(Q, K, V, grid=[2, 64], forloop=1, threads=128) {
    q = iter(Q, imap=[0])
    k = iter(K, imap=[0, 2])
    v = iter(V, imap=[0, 1])
    kn = k / sqrt(sum(sqr(k), dim=1) / 64)
    e = exp(matmul(q, kn) / sqrt(sum(sqr(q), dim=2) / 64))
    p = matmul(e, v)
    s = sum(e, dim=2)
    save(reshape(accum(p), shape=[1, 256, 64, 1]), omap=[0, 3])
    save(reshape(accum(s), shape=[1, 256, 1, 1]), omap=[0, 3])
}
O = kernel(P, D, grid=[2, 128], forloop=1, threads=128) {
    p = iter(P, imap=[0, 1])
    d = iter(D, imap=[0, 1])
    o = sum(p / sum(d, dim=3), dim=3)
    save(accum(reshape(o, shape=[1, 2, 64])), omap=[0, 1])
}
output O
