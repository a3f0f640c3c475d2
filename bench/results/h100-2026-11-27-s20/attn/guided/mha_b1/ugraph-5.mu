input Q : f16[32, 1, 128]
input K : f16[32, 128, 4096]
input V : f16[32, 4096, 128]
v4 = Q / 8
O = kernel(K, V, v4, grid=[32, 4], forloop=8, threads=128) {
    t0 = iter(K, imap=[0], fmap=2)
    t1 = iter(V, imap=[0, 2], fmap=1)
    t2 = iter(v4, imap=[0])
    t3 = matmul(t2, t0)
    t4 = exp(t3)
    t5 = sum(t4, dim=2)
    t6 = matmul(t4, t1)
    t7 = accum(t5)
    t8 = accum(t6)
    t9 = t8 / t7
    save(t9, omap=[0, 2])
}
output O
