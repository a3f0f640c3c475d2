input X : f16[16, 2048]
input Wr : f16[2048, 64]
O = kernel(X, Wr, grid=[8], forloop=8, threads=128) {
    t0 = iter(X, imap=[0], fmap=1)
    t1 = iter(Wr, fmap=0)
    t2 = matmul(t0, t1)
    t3 = accum(t2)
    t4 = exp(t3)
    t5 = sum(t4, dim=1)
    t6 = t4 / t5
    save(t6, omap=[0])
}
output O
