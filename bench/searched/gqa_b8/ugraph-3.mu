input Q : f16[16, 256, 64]
input K : f16[16, 64, 4096]
input V : f16[16, 4096, 64]
O = kernel(Q, K, V, grid=[16, 8], forloop=8, threads=128) {
    t0 = iter(Q, imap=[0, 1])
    t1 = iter(K, imap=[0], fmap=2)
    t2 = iter(V, imap=[0], fmap=1)
    t3 = matmul(t0, t1)
    t4 = exp(t3)
    t5 = sum(t4, dim=2)
    t6 = matmul(t4, t2)
    t7 = accum(t5)
    t8 = accum(t6)
    t9 = t8 / t7
    save(t9, omap=[0, 1])
}
output O
