input Q : f16[1, 32, 128]
input K : f16[1, 128, 4096]
input V : f16[1, 4096, 128]
v3, v4 = kernel(Q, K, grid=[64], forloop=1, threads=128) {
    t1 = iter(Q)
    t2 = iter(K, imap=[2])
    t3 = accum(t1)
    t4 = t2 / 8
    t5 = accum(t4)
    t6 = matmul(t3, t5)
    t7 = exp(t6)
    t8 = sum(t7, dim=2)
    save(t7, omap=[2])
    t10 = reshape(t8, shape=[1, 32, 1, 1])
    save(t10, omap=[3])
}
O = kernel(V, v3, v4, grid=[32, 2], forloop=1, threads=128) {
    t0 = iter(V, imap=[2])
    t1 = iter(v3, imap=[-1, 1])
    t2 = iter(v4, imap=[-1, 1])
    t3 = matmul(t1, t0)
    t4 = sum(t2, dim=3)
    t5 = accum(t3)
    t6 = accum(t4)
    t7 = reshape(t6, shape=[1, 16, 1])
    t8 = t5 / t7
    save(t8, omap=[2, 1])
}
output O
