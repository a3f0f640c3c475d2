input X : f16[16, 1024]
input W : f16[1024, 3072]
O = kernel(X, W, grid=[96], forloop=1, threads=128) {
    t0 = iter(X)
    t1 = iter(W, imap=[1])
    t2 = sqr(t0)
    t3 = accum(t0)
    t4 = accum(t1)
    t5 = sum(t2, dim=1)
    t6 = accum(t5)
    t7 = sqrt(t6)
    t8 = t3 / t7
    t9 = matmul(t8, t4)
    save(t9, omap=[1])
}
output O
