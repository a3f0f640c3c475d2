input X : f16[16, 2048]
input Wg : f16[2048, 8192]
input Wu : f16[2048, 8192]
input Wd : f16[8192, 2048]
t4, t5 = kernel(X, Wg, Wu, grid=[64, 4], forloop=8, threads=128) {
    t0 = iter(X, imap=[-1, 1], fmap=1)
    t1 = iter(Wg, imap=[1, 0], fmap=0)
    t2 = matmul(t0, t1)
    t3 = accum(t2)
    t4 = reshape(t3, shape=[1, 16, 128])
    save(t4, omap=[2, 0])
    t6 = iter(X, imap=[-1, 1], fmap=1)
    t7 = iter(Wu, imap=[1, 0], fmap=0)
    t8 = matmul(t6, t7)
    t9 = accum(t8)
    t10 = reshape(t9, shape=[1, 16, 128])
    save(t10, omap=[2, 0])
}
t6 = kernel(t4, t5, grid=[512], forloop=1, threads=128) {
    t0 = iter(t4, imap=[2])
    t1 = sum(t0, dim=0)
    t2 = reshape(t1, shape=[16, 16])
    t3 = accum(t2)
    t4 = silu(t3)
    t5 = iter(t5, imap=[2])
    t6 = sum(t5, dim=0)
    t7 = reshape(t6, shape=[16, 16])
    t8 = accum(t7)
    t9 = t4 * t8
    save(t9, omap=[1])
}
t7 = kernel(t6, Wd, grid=[16, 16], forloop=8, threads=128) {
    t0 = iter(t6, imap=[-1, 1], fmap=1)
    t1 = iter(Wd, imap=[1, 0], fmap=0)
    t2 = matmul(t0, t1)
    t3 = accum(t2)
    t4 = reshape(t3, shape=[1, 16, 128])
    save(t4, omap=[2, 0])
}
O = kernel(t7, grid=[128], forloop=1, threads=128) {
    t0 = iter(t7, imap=[2])
    t1 = sum(t0, dim=0)
    t2 = reshape(t1, shape=[16, 16])
    t3 = accum(t2)
    save(t3, omap=[1])
}
output O
