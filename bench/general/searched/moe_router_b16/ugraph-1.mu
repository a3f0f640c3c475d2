input X : f16[16, 2048]
input Wr : f16[2048, 64]
t2 = kernel(X, Wr, grid=[8], forloop=4, threads=128) {
    t0 = iter(X, imap=[1], fmap=1)
    t1 = iter(Wr, imap=[0], fmap=0)
    t2 = matmul(t0, t1)
    t3 = accum(t2)
    t4 = reshape(t3, shape=[1, 16, 64])
    save(t4, omap=[0])
}
t3 = kernel(t2, grid=[4], forloop=1, threads=128) {
    t0 = iter(t2, imap=[2])
    t1 = sum(t0, dim=0)
    t2 = reshape(t1, shape=[16, 16])
    t3 = accum(t2)
    save(t3, omap=[1])
}
O = kernel(t3, grid=[4], forloop=1, threads=128) {
    t0 = iter(t3, imap=[0])
    t1 = exp(t0)
    t2 = sum(t1, dim=1)
    t3 = t1 / t2
    t4 = accum(t3)
    save(t4, omap=[0])
}
output O
