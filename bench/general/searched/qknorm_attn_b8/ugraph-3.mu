input Q : f16[8, 64, 128]
input K : f16[8, 128, 1024]
input V : f16[8, 1024, 128]
t3 = kernel(Q, K, grid=[8, 8], forloop=1, threads=128) {
    t2 = iter(Q, imap=[0])
    t3 = iter(K, imap=[0, 2])
    t4 = accum(t2)
    t5 = sqr(t3)
    t6 = sum(t5, dim=1)
    t7 = t6 / 128
    t8 = sqrt(t7)
    t9 = t3 / t8
    t10 = sqr(t4)
    t11 = sum(t10, dim=2)
    t12 = t11 / 128
    t13 = sqrt(t12)
    t14 = t4 / t13
    t15 = t9 * 0.08838834764831845
    t16 = accum(t15)
    t17 = matmul(t14, t16)
    t18 = exp(t17)
    save(t18, omap=[0, 2])
}
t4 = sum(t3, dim=2)
t5 = t3 / t4
O = matmul(t5, V)
output O
