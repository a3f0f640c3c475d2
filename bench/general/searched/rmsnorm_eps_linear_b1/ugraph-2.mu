input X : f16[1, 4096]
input G : f16[4096]
input W : f16[4096, 4096]
Y = kernel(X, G, grid=[1], forloop=1, threads=128) {
    t0 = iter(X)
    t1 = sqr(t0)
    t2 = sum(t1, dim=1)
    t4 = t2 / 4096
    t6 = t4 + 0.000001
    t7 = sqrt(t6)
    t8 = t0 / t7
    t9 = iter(G)
    t10 = t8 * t9
    t11 = accum(t10)
    save(t11)
}
t4 = kernel(Y, W, grid=[64, 2], forloop=32, threads=128) {
    t0 = iter(Y, imap=[-1, 1], fmap=1)
    t1 = iter(W, imap=[1, 0], fmap=0)
    t2 = matmul(t0, t1)
    t3 = accum(t2)
    t4 = reshape(t3, shape=[1, 1, 64])
    save(t4, omap=[2, 0])
}
O = kernel(t4, grid=[256], forloop=1, threads=128) {
    t0 = iter(t4, imap=[2])
    t1 = sum(t0, dim=0)
    t2 = reshape(t1, shape=[1, 16])
    t3 = accum(t2)
    save(t3, omap=[1])
}
output O
