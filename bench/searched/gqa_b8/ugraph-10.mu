input Q : f16[16, 256, 64]
input K : f16[16, 64, 4096]
input V : f16[16, 4096, 64]
v3, v4 = kernel(Q, K, grid=[16, 64], forloop=1, threads=128) {
    t0 = iter(Q, imap=[0])
    t1 = iter(K, imap=[0, 2])
    t2 = accum(t0)
    t3 = accum(t1)
    t4 = matmul(t2, t3)
    t5 = exp(t4)
    t6 = sum(t5, dim=2)
    save(t5, omap=[0, 2])
    t8 = reshape(t6, shape=[1, 256, 1, 1])
    save(t8, omap=[0, 3])
}
O = kernel(V, v3, v4, grid=[16, 8], forloop=8, threads=128) {
    t0 = iter(V, imap=[0], fmap=1)
    t1 = iter(v3, imap=[0, 1], fmap=2)
    t2 = iter(v4, imap=[0, 1])
    t3 = matmul(t1, t0)
    t4 = sum(t2, dim=3)
    t5 = reshape(t4, shape=[1, 32, 1])
    t6 = t3 / t5
    t7 = accum(t6)
    save(t7, omap=[0, 1])
}
output O
