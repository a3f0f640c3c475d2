input X : f16[2, 2048]
input G : f16[2048]
input Wg : f16[2048, 5632]
input Wu : f16[2048, 5632]
Y = kernel(X, G, grid=[2], forloop=1, threads=128) {
    t0 = iter(X, imap=[0])
    t1 = sqr(t0)
    t2 = sum(t1, dim=1)
    t4 = t2 / 2048
    t5 = sqrt(t4)
    t6 = t0 / t5
    t7 = iter(G)
    t8 = t6 * t7
    t9 = accum(t8)
    save(t9, omap=[0])
}
O = kernel(Y, Wg, Wu, grid=[88], forloop=32, threads=128) {
    t0 = iter(Y, fmap=1)
    t1 = iter(Wg, imap=[1], fmap=0)
    t2 = matmul(t0, t1)
    t3 = accum(t2)
    t4 = silu(t3)
    t5 = iter(Y, fmap=1)
    t6 = iter(Wu, imap=[1], fmap=0)
    t7 = matmul(t5, t6)
    t8 = accum(t7)
    t9 = t4 * t8
    save(t9, omap=[1])
}
output O
