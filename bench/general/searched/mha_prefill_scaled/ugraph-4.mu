input Q : f16[32, 16, 128]
input K : f16[32, 128, 1024]
input V : f16[32, 1024, 128]
t3, t4 = kernel(Q, K, V, grid=[8, 8], forloop=64, threads=128) {
    t1 = iter(Q, imap=[0, 1])
    t2 = iter(K, imap=[0], fmap=2)
    t3 = iter(V, imap=[0], fmap=1)
    t4 = matmul(t1, t2)
    t5 = t4 * 0.08838834764831845
    t6 = exp(t5)
    t7 = accum(t6, fmap=2)
    t8 = matmul(t6, t3)
    save(t7, omap=[0, 1])
    t10 = accum(t8)
    save(t10, omap=[0, 1])
}
t5 = sum(t3, dim=2)
O = t4 / t5
output O
