input Q : f16[1, 32, 128]
input K : f16[1, 128, 2048]
input V : f16[1, 2048, 128]
v4 = K * 0.08838834764831845
O = kernel(Q, V, v4, grid=[2, 8], forloop=8, threads=128) {
    t0 = iter(Q, imap=[1])
    t1 = iter(V, imap=[-1, 2], fmap=1)
    t2 = iter(v4, fmap=2)
    t3 = matmul(t0, t2)
    t4 = exp(t3)
    t5 = sum(t4, dim=2)
    t6 = matmul(t4, t1)
    t7 = accum(t5)
    t8 = accum(t6)
    t9 = t8 / t7
    save(t9, omap=[1, 2])
}
output O
