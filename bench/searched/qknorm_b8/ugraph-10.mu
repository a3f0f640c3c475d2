input Q : f16[16, 256, 64]
input K : f16[16, 64, 4096]
input V : f16[16, 4096, 64]
v3, v4 = kernel(Q, K, grid=[16, 64], forloop=1, threads=128) {
    t1 = iter(Q, imap=[0])
    t2 = iter(K, imap=[0, 2])
    t3 = sqr(t1)
    t4 = sum(t3, dim=2)
    t5 = t4 / 64
    t6 = sqrt(t5)
    t7 = t1 / t6
    t8 = sqr(t2)
    t9 = matmul(t7, t2)
    t10 = t8 / 64
    t11 = accum(t9)
    t12 = sum(t10, dim=1)
    save(t11, omap=[0, 2])
    t14 = accum(t12)
    save(t14, omap=[0, 2])
}
O = kernel(V, v3, v4, grid=[16, 64], forloop=8, threads=128) {
    t0 = iter(V, imap=[0], fmap=2)
    t1 = iter(v3, imap=[0, 1])
    t2 = iter(v4, imap=[0])
    t3 = sqrt(t2)
    t4 = t1 / t3
    t5 = exp(t4)
    t6 = sum(t5, dim=2)
    t7 = matmul(t5, t0)
    t8 = t7 / t6
    t9 = accum(t8, fmap=2)
    save(t9, omap=[0, 1])
}
output O
