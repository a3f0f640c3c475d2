input X : f16[2, 4096]
input W : f16[4096, 6144]
O = kernel(X, W, grid=[96], forloop=8, threads=128) {
    t1 = iter(X, fmap=1)
    t2 = iter(W, imap=[1], fmap=0)
    t3 = sqr(t1)
    t4 = matmul(t1, t2)
    t5 = sum(t3, dim=1)
    t6 = accum(t4)
    t7 = accum(t5)
    t8 = t7 / 4096
    t9 = sqrt(t8)
    t10 = t6 / t9
    save(t10, omap=[1])
}
output O
