input Q : f16[1, 32, 128]
input K : f16[1, 128, 2048]
input V : f16[1, 2048, 128]
v4 = Q * 0.08838834764831845
O = kernel(K, V, v4, grid=[8, 2], forloop=8, threads=128) {
    t0 = iter(K, fmap=2)
    t1 = iter(V, imap=[2], fmap=1)
    t2 = iter(v4, imap=[-1, 1])
    t3 = matmul(t2, t0)
    t4 = exp(t3)
    t5 = accum(t4, fmap=2)
    t6 = matmul(t4, t1)
    t7 = sum(t5, dim=2)
    t8 = accum(t6)
    t9 = t8 / t7
    save(t9, omap=[2, 1])
}
output O
