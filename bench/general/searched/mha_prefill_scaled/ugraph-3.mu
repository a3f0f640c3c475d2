input Q : f16[32, 16, 128]
input K : f16[32, 128, 1024]
input V : f16[32, 1024, 128]
v4 = Q * 0.08838834764831845
t5, t6 = kernel(K, V, v4, grid=[8, 8], forloop=64, threads=128) {
    t0 = iter(K, imap=[0], fmap=2)
    t1 = iter(V, imap=[0], fmap=1)
    t2 = iter(v4, imap=[0, 1])
    t3 = matmul(t2, t0)
    t4 = exp(t3)
    t5 = sum(t4, dim=2)
    t6 = matmul(t4, t1)
    t7 = accum(t5)
    t8 = accum(t6)
    save(t7, omap=[0, 1])
    save(t8, omap=[0, 1])
}
O = t6 / t5
output O
