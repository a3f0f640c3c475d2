input Q : f16[16, 256, 64]
input K : f16[16, 64, 4096]
input V : f16[16, 4096, 64]
v3, v4 = kernel(Q, K, grid=[8, 64], forloop=64, threads=128) {
    t0 = iter(Q, imap=[0, 1])
    t1 = iter(K, imap=[0], fmap=2)
    t2 = matmul(t0, t1)
    t3 = exp(t2)
    t4 = accum(t2, fmap=2)
    t5 = sum(t3, dim=2)
    t6 = exp(t4)
    t7 = accum(t5)
    save(t6, omap=[0, 1])
    save(t7, omap=[0, 1])
}
O = kernel(V, v3, v4, grid=[8, 8], forloop=64, threads=128) {
    t0 = iter(V, imap=[0], fmap=1)
    t1 = iter(v3, imap=[0, 1], fmap=2)
    t2 = iter(v4, imap=[0, 1])
    t3 = matmul(t1, t0)
    t4 = t3 / t2
    t5 = accum(t4)
    save(t5, omap=[0, 1])
}
output O
