input Q : f16[2, 256, 64]
input K : f16[2, 64, 4096]
input V : f16[2, 4096, 64]
v3, v4 = kernel(Q, K, V, grid=[2, 2, 32], forloop=1, threads=128) {
    t0 = iter(Q, imap=[0, 1])
    t1 = iter(K, imap=[0, -1, 2])
    t2 = iter(V, imap=[0, -1, 1])
    t3 = matmul(t0, t1)
    t4 = accum(t2)
    t5 = exp(t3)
    t6 = accum(t5)
    t7 = sum(t6, dim=2)
    t8 = matmul(t6, t4)
    t9 = reshape(t7, shape=[1, 128, 1, 1])
    save(t9, omap=[0, 1, 3])
    t11 = reshape(t8, shape=[1, 128, 64, 1])
    save(t11, omap=[0, 1, 3])
}
O = kernel(v3, v4, grid=[2, 32, 2], forloop=1, threads=128) {
    t0 = iter(v3, imap=[0, 1])
    t1 = iter(v4, imap=[0, 1, 2])
    t2 = accum(t0)
    t3 = accum(t1)
    t4 = sum(t2, dim=3)
    t5 = sum(t3, dim=3)
    t6 = reshape(t4, shape=[1, 8, 1])
    t7 = reshape(t5, shape=[1, 8, 32])
    t8 = t7 / t6
    save(t8, omap=[0, 1, 2])
}
output O
