input Q : f16[16, 256, 64]
input K : f16[16, 64, 4096]
input V : f16[16, 4096, 64]
v3, v4 = kernel(Q, K, V, grid=[16, 64], forloop=1, threads=128) {
    t0 = iter(Q, imap=[0])
    t1 = iter(K, imap=[0, 2])
    t2 = iter(V, imap=[0, 1])
    t3 = accum(t0)
    t4 = accum(t1)
    t5 = accum(t2)
    t6 = matmul(t3, t4)
    t7 = exp(t6)
    save(t7, omap=[0, 2])
    t9 = matmul(t7, t5)
    t10 = reshape(t9, shape=[1, 256, 64, 1])
    save(t10, omap=[0, 3])
}
O = kernel(v3, v4, grid=[16, 64], forloop=1, threads=128) {
    t0 = iter(v3, imap=[0, 1])
    t1 = iter(v4, imap=[0, 1])
    t2 = sum(t0, dim=2)
    t3 = sum(t1, dim=3)
    t4 = accum(t2)
    t5 = reshape(t3, shape=[1, 4, 64])
    t6 = accum(t5)
    t7 = t6 / t4
    save(t7, omap=[0, 1])
}
output O
