input X : f16[16, 4096]
input W : f16[4096, 6144]
t2 = sqr(X)
v3 = sum(t2, dim=1)
O = kernel(X, W, v3, grid=[96], forloop=8, threads=128) {
    t1 = iter(X, fmap=1)
    t2 = iter(W, imap=[1], fmap=0)
    t3 = iter(v3)
    t4 = matmul(t1, t2)
    t5 = t3 / 4096
    t6 = sqrt(t5)
    t7 = t4 / t6
    t8 = accum(t7)
    save(t8, omap=[1])
}
output O
