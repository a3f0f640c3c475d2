input Q : f16[256, 1, 128]
input K : f16[256, 128, 1024]
input V : f16[256, 1024, 128]
O = kernel(Q, K, V, grid=[256], forloop=8, threads=128) {
    t1 = iter(Q, imap=[0])
    t2 = iter(K, imap=[0], fmap=2)
    t3 = iter(V, imap=[0], fmap=1)
    t4 = matmul(t1, t2)
    t5 = t4 / 8
    t6 = exp(t5)
    t7 = sum(t6, dim=2)
    t8 = matmul(t6, t3)
    t9 = accum(t7)
    t10 = accum(t8)
    t11 = t10 / t9
    save(t11, omap=[0])
}
output O
