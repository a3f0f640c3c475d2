input X : f16[16, 1024]
input W : f16[1024, 3072]
O = kernel(X, W, grid=[96], forloop=1, threads=128) {
    t0 = iter(X)
    t1 = iter(W, imap=[1])
    t2 = accum(t0)
    t3 = accum(t1)
    t4 = sqr(t2)
    t5 = matmul(t2, t3)
    t6 = sum(t4, dim=1)
    t7 = sqrt(t6)
    t8 = t5 / t7
    save(t8, omap=[1])
}
output O
