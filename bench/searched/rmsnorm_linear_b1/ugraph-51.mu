input X : f16[2, 4096]
input W : f16[4096, 6144]
v2 = sqr(X)
O = kernel(X, W, v2, grid=[96], forloop=8, threads=128) {
    t1 = iter(X, fmap=1)
    t2 = iter(W, imap=[1], fmap=0)
    t3 = iter(v2)
    t4 = matmul(t1, t2)
    t5 = sum(t3, dim=1)
    t6 = t5 / 4096
    t7 = sqrt(t6)
    t8 = t4 / t7
    t9 = accum(t8)
    save(t9, omap=[1])
}
output O
