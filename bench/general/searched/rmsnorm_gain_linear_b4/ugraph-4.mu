input X : f16[4, 2048]
input G : f16[2048]
input W : f16[2048, 6144]
t3 = kernel(X, G, grid=[4], forloop=1, threads=128) {
    t0 = iter(X, imap=[0])
    t1 = sqr(t0)
    t2 = sum(t1, dim=1)
    t4 = t2 / 2048
    t5 = sqrt(t4)
    t6 = t0 / t5
    t7 = iter(G)
    t8 = t6 * t7
    t9 = accum(t8)
    save(t9, omap=[0])
}
t4 = kernel(t3, W, grid=[96, 8], forloop=4, threads=128) {
    t0 = iter(t3, imap=[-1, 1], fmap=1)
    t1 = iter(W, imap=[1, 0], fmap=0)
    t2 = matmul(t0, t1)
    t3 = accum(t2)
    t4 = reshape(t3, shape=[1, 4, 64])
    save(t4, omap=[2, 0])
}
O = kernel(t4, grid=[384], forloop=1, threads=128) {
    t0 = iter(t4, imap=[2])
    t1 = sum(t0, dim=0)
    t2 = reshape(t1, shape=[4, 16])
    t3 = accum(t2)
    save(t3, omap=[1])
}
output O
