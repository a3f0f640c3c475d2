# program: examples/gqa_b1.mu
# The search's FlashDecoding split for GQA b=1 (64 splits of one 64-key tile each, then a
# combining kernel). Kernel 1's partials go to a buffer laid out splits outermost, which
# kernel 2 reads as column-major tiles; its exp tile is stored bf16 and V is converted once.
input Q : f16[2, 256, 64]
input K : f16[2, 64, 4096]
input V : f16[2, 4096, 64]
v3, v4 = kernel(Q, K, V, grid=[2, 64], forloop=1, threads=128) {
    t0 = iter(Q, imap=[0])
    t1 = iter(K, imap=[0, 2])
    t2 = iter(V, imap=[0, 1])
    t3 = matmul(t0, t1)
    t4 = accum(t2)
    t5 = exp(t3)
    t6 = accum(t5)
    t7 = sum(t6, dim=2)
    t8 = matmul(t6, t4)
    t9 = reshape(t7, shape=[1, 256, 1, 1])
    save(t9, omap=[0, 3])
    t11 = reshape(t8, shape=[1, 256, 64, 1])
    save(t11, omap=[0, 3])
}
O = kernel(v3, v4, grid=[2, 128], forloop=1, threads=128) {
    t0 = iter(v3, imap=[0, 1])
    t1 = iter(v4, imap=[0, 1])
    t2 = sum(t0, dim=3)
    t3 = t1 / t2
    t4 = sum(t3, dim=3)
    t5 = reshape(t4, shape=[1, 2, 64])
    t6 = accum(t5)
    save(t6, omap=[0, 1])
}
output O
