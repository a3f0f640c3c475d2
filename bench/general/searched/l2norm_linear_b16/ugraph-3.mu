input X : f16[16, 1024]
input W : f16[1024, 3072]
O = kernel(X, W, grid=[96], forloop=1, threads=128) {
    t0 = iter(X)
    t1 = iter(W, imap=[1])
    t2 = sqr(t0)
    t3 = accum(t0)
    t4 = accum(t1)
    t5 = accum(t2)
    t6 = matmul(t3, t4)
    t7 = sum(t5, dim=1)
    t8 = sqrt(t7)
    t9 = t6 / t8
    save(t9, omap=[1])
}
output O
