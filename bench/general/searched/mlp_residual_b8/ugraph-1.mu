input X : f16[8, 1024]
input W1 : f16[1024, 4096]
input W2 : f16[4096, 1024]
t3 = kernel(X, W1, grid=[64, 2], forloop=8, threads=128) {
    t0 = iter(X, imap=[-1, 1], fmap=1)
    t1 = iter(W1, imap=[1, 0], fmap=0)
    t2 = matmul(t0, t1)
    t3 = accum(t2)
    t4 = reshape(t3, shape=[1, 8, 64])
    save(t4, omap=[2, 0])
}
t4 = kernel(t3, grid=[256], forloop=1, threads=128) {
    t0 = iter(t3, imap=[2])
    t1 = sum(t0, dim=0)
    t2 = reshape(t1, shape=[8, 16])
    t3 = accum(t2)
    t4 = silu(t3)
    save(t4, omap=[1])
}
t5 = kernel(t4, W2, grid=[16, 8], forloop=8, threads=128) {
    t0 = iter(t4, imap=[-1, 1], fmap=1)
    t1 = iter(W2, imap=[1, 0], fmap=0)
    t2 = matmul(t0, t1)
    t3 = accum(t2)
    t4 = reshape(t3, shape=[1, 8, 64])
    save(t4, omap=[2, 0])
}
O = kernel(X, t5, grid=[64], forloop=1, threads=128) {
    t0 = iter(X, imap=[1])
    t1 = iter(t5, imap=[2])
    t2 = sum(t1, dim=0)
    t3 = reshape(t2, shape=[8, 16])
    t4 = accum(t3)
    t5 = t0 + t4
    save(t5, omap=[1])
}
output O
