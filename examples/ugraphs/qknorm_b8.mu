# QKNorm + attention split across the KV sequence in two kernels, for examples/qknorm_b8.mu.
# Same split as examples/ugraphs/gqa_b8.mu. Kernel 1 normalises each K tile over the head dim
# inside the block (the tile holds the whole head dim), and divides Q K by Q's RMS after the
# matmul instead of normalising Q first (Mirage Figure 3b's move): exp(Qn Kn) = exp((Q Kn) / rms(Q)).
# Grid z splits the 256 queries in two halves so the block fits in shared memory.
# Kernel 2 adds the 8 partials and divides: O = sum P / sum D.
input Q : f16[16, 256, 64]
input K : f16[16, 64, 4096]
input V : f16[16, 4096, 64]
P, D = kernel(Q, K, V, grid=[16, 8, 2], forloop=8, threads=128) {
    q = iter(Q, imap=[0, -1, 1])
    k = iter(K, imap=[0, 2], fmap=2)
    v = iter(V, imap=[0, 1], fmap=1)
    kn = k / sqrt(sum(sqr(k), dim=1) / 64)
    e = exp(matmul(q, kn) / sqrt(sum(sqr(q), dim=2) / 64))
    p = accum(matmul(e, v))
    s = accum(sum(e, dim=2))
    save(reshape(p, shape=[1, 128, 1, 64]), omap=[0, 2, 1])
    save(s, omap=[0, 2, 1])
}
O = kernel(P, D, grid=[16, 4], forloop=1, threads=128) {
    p = iter(P, imap=[0, 1])
    d = iter(D, imap=[0, 1])
    num = reshape(sum(p, dim=2), shape=[1, 64, 64])
    save(accum(num / sum(d, dim=2)), omap=[0, 1])
}
output O
