input Q : f16[16, 256, 64]
input K : f16[16, 64, 4096]
input V : f16[16, 4096, 64]
v3 = kernel(Q, K, grid=[8, 64], forloop=64, threads=128) {
    t0 = iter(Q, imap=[0, 1])
    t1 = iter(K, imap=[0], fmap=2)
    t2 = matmul(t0, t1)
    t3 = exp(t2)
    t4 = accum(t2, fmap=2)
    t5 = sum(t3, dim=2)
    t6 = exp(t4)
    t7 = accum(t5)
    t8 = t6 / t7
    save(t8, omap=[0, 1])
}
O = kernel(V, v3, grid=[8, 8], forloop=64, threads=128) {
    t0 = iter(V, imap=[0], fmap=1)
    t1 = iter(v3, imap=[0, 1], fmap=2)
    t2 = matmul(t1, t0)
    t3 = accum(t2)
    save(t3, omap=[0, 1])
}
output O
