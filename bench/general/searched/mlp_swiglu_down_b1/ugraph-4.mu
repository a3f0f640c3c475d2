input X : f16[1, 4096]
input Wg : f16[4096, 11008]
input Wu : f16[4096, 11008]
input Wd : f16[11008, 4096]
t4 = kernel(X, Wg, Wu, grid=[172], forloop=64, threads=128) {
    t0 = iter(X, fmap=1)
    t1 = iter(Wg, imap=[1], fmap=0)
    t2 = matmul(t0, t1)
    t3 = accum(t2)
    t4 = silu(t3)
    t5 = iter(X, fmap=1)
    t6 = iter(Wu, imap=[1], fmap=0)
    t7 = matmul(t5, t6)
    t8 = accum(t7)
    t9 = t4 * t8
    save(t9, omap=[1])
}
t5 = kernel(t4, Wd, grid=[64, 2], forloop=86, threads=128) {
    t0 = iter(t4, imap=[-1, 1], fmap=1)
    t1 = iter(Wd, imap=[1, 0], fmap=0)
    t2 = matmul(t0, t1)
    t3 = accum(t2)
    t4 = reshape(t3, shape=[1, 1, 64])
    save(t4, omap=[2, 0])
}
O = kernel(t5, grid=[256], forloop=1, threads=128) {
    t0 = iter(t5, imap=[2])
    t1 = sum(t0, dim=0)
    t2 = reshape(t1, shape=[1, 16])
    t3 = accum(t2)
    save(t3, omap=[1])
}
output O
