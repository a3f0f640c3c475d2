input Q : f16[16, 8, 128]
input K : f16[16, 128, 1024]
input V : f16[16, 1024, 128]
t3 = kernel(Q, K, grid=[16, 16], forloop=2, threads=128) {
    t0 = iter(Q, imap=[-1, 0], fmap=2)
    t1 = iter(K, imap=[2, 0], fmap=1)
    t2 = matmul(t0, t1)
    t3 = accum(t2)
    save(t3, omap=[2, 0])
}
t4 = kernel(t3, grid=[8, 16], forloop=1, threads=128) {
    t0 = iter(t3, imap=[1, 0])
    t2 = t0 * 0.08838834764831845
    t3 = max(t2, dim=2)
    t4 = accum(t3)
    save(t4, omap=[1, 0])
}
t5 = kernel(t3, t4, grid=[8, 16], forloop=1, threads=128) {
    t0 = iter(t3, imap=[1, 0])
    t2 = t0 * 0.08838834764831845
    t3 = iter(t4, imap=[1, 0])
    t4 = t2 - t3
    t5 = exp(t4)
    t6 = sum(t5, dim=2)
    t7 = accum(t6)
    save(t7, omap=[1, 0])
}
t6 = kernel(t3, t4, t5, V, grid=[2, 16, 4], forloop=4, threads=128) {
    t0 = iter(t3, imap=[-1, 0, 2], fmap=2)
    t2 = t0 * 0.08838834764831845
    t3 = iter(t4, imap=[-1, 0])
    t4 = t2 - t3
    t5 = exp(t4)
    t6 = iter(t5, imap=[-1, 0])
    t7 = t5 / t6
    t8 = iter(V, imap=[2, 0, 1], fmap=1)
    t9 = matmul(t7, t8)
    t10 = accum(t9)
    t11 = reshape(t10, shape=[1, 1, 8, 64])
    save(t11, omap=[3, 1, 0])
}
O = kernel(t6, grid=[8, 16], forloop=4, threads=128) {
    t0 = iter(t6, imap=[3, 1], fmap=0)
    t1 = reshape(t0, shape=[1, 8, 16])
    t2 = accum(t1)
    save(t2, omap=[2, 0])
}
output O
