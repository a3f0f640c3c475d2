input X : f16[128, 1024]
input W1 : f16[1024, 4096]
input W3 : f16[1024, 4096]
input W2 : f16[4096, 1024]
t4 = kernel(X, W1, W3, grid=[64, 2], forloop=8, threads=128) {
    t0 = iter(X, imap=[-1, 0], fmap=1)
    t1 = iter(W1, imap=[1], fmap=0)
    t2 = matmul(t0, t1)
    t3 = accum(t2)
    t4 = silu(t3)
    t5 = iter(X, imap=[-1, 0], fmap=1)
    t6 = iter(W3, imap=[1], fmap=0)
    t7 = matmul(t5, t6)
    t8 = accum(t7)
    t9 = t4 * t8
    save(t9, omap=[1, 0])
}
t5 = kernel(t4, W2, grid=[16, 2, 4], forloop=8, threads=128) {
    t0 = iter(t4, imap=[-1, 0, 1], fmap=1)
    t1 = iter(W2, imap=[1, -1, 0], fmap=0)
    t2 = matmul(t0, t1)
    t3 = accum(t2)
    t4 = reshape(t3, shape=[1, 64, 64])
    save(t4, omap=[2, 1, 0])
}
O = kernel(t5, grid=[64, 2], forloop=4, threads=128) {
    t0 = iter(t5, imap=[2, 1], fmap=0)
    t1 = reshape(t0, shape=[64, 16])
    t2 = accum(t1)
    save(t2, omap=[1, 0])
}
output O
