input X : f16[16, 1024]
input W : f16[1024, 3072]
O = kernel(X, W, grid=[96], forloop=1, threads=128) {
    t0 = iter(X)
    t1 = iter(W, imap=[1])
    t2 = accum(t0)
    t3 = accum(t1)
    t4 = sqr(t2)
    t5 = sum(t4, dim=1)
    t6 = sqrt(t5)
    t7 = t2 / t6
    t8 = matmul(t7, t3)
    save(t8, omap=[1])
}
output O
