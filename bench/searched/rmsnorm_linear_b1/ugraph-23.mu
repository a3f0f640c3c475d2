input X : f16[2, 4096]
input W : f16[4096, 6144]
v3 = X / 4096
O = kernel(X, W, v3, grid=[96], forloop=8, threads=128) {
    t0 = iter(X, fmap=1)
    t1 = iter(W, imap=[1], fmap=0)
    t2 = iter(v3, fmap=1)
    t3 = matmul(t0, t1)
    t4 = t0 * t2
    t5 = accum(t3)
    t6 = accum(t4, fmap=1)
    t7 = sum(t6, dim=1)
    t8 = sqrt(t7)
    t9 = t5 / t8
    save(t9, omap=[1])
}
output O
