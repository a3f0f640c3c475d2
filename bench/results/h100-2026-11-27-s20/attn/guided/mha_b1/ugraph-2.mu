input Q : f16[32, 1, 128]
input K : f16[32, 128, 4096]
input V : f16[32, 4096, 128]
O = kernel(Q, K, V, grid=[32, 4], forloop=8, threads=128) {
    t1 = iter(Q, imap=[0])
    t2 = iter(K, imap=[0], fmap=2)
    t3 = iter(V, imap=[0, 2], fmap=1)
    t4 = t1 / 8
    t5 = matmul(t4, t2)
    t6 = exp(t5)
    t7 = sum(t6, dim=2)
    t8 = matmul(t6, t3)
    t9 = accum(t7)
    t10 = accum(t8)
    t11 = t10 / t9
    save(t11, omap=[0, 2])
}
output O
