input Q : f16[16, 256, 64]
input K : f16[16, 64, 4096]
input V : f16[16, 4096, 64]
v3, v4 = kernel(Q, K, V, grid=[8, 64], forloop=64, threads=128) {
    t0 = iter(Q, imap=[0, 1])
    t1 = iter(K, imap=[0], fmap=2)
    t2 = iter(V, imap=[0], fmap=1)
    t3 = matmul(t0, t1)
    t4 = exp(t3)
    t5 = accum(t3, fmap=2)
    t6 = matmul(t4, t2)
    t7 = exp(t5)
    t8 = accum(t6)
    save(t7, omap=[0, 1])
    save(t8, omap=[0, 1])
}
O = kernel(v3, v4, grid=[8, 64], forloop=1, threads=128) {
    t0 = iter(v3, imap=[0, 1])
    t1 = iter(v4, imap=[0, 1])
    t2 = sum(t0, dim=2)
    t3 = t1 / t2
    t4 = accum(t3)
    save(t4, omap=[0, 1])
}
output O
