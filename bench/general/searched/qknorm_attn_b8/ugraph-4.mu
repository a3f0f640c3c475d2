input Q : f16[8, 64, 128]
input K : f16[8, 128, 1024]
input V : f16[8, 1024, 128]
t3 = kernel(Q, K, grid=[8, 8], forloop=1, threads=128) {
    t2 = iter(Q, imap=[0])
    t3 = iter(K, imap=[0, 2])
    t4 = sqr(t2)
    t5 = sum(t4, dim=2)
    t6 = t5 / 128
    t7 = sqrt(t6)
    t8 = t2 / t7
    t9 = sqr(t3)
    t10 = sum(t9, dim=1)
    t11 = t10 / 128
    t12 = sqrt(t11)
    t13 = t3 / t12
    t14 = accum(t8)
    t15 = t13 * 0.08838834764831845
    t16 = accum(t15)
    t17 = matmul(t14, t16)
    t18 = exp(t17)
    save(t18, omap=[0, 2])
}
t4 = sum(t3, dim=2)
t5 = t3 / t4
O = matmul(t5, V)
output O
