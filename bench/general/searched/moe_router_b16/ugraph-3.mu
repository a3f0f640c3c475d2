input X : f16[16, 2048]
input Wr : f16[2048, 64]
t2 = kernel(X, Wr, grid=[8, 8], forloop=1, threads=128) {
    t0 = iter(X, imap=[0])
    t1 = iter(Wr, imap=[-1, 1])
    t2 = matmul(t0, t1)
    t3 = exp(t2)
    t4 = accum(t3)
    save(t4, omap=[0, 1])
}
t3 = sum(t2, dim=1)
O = t2 / t3
output O
