input X : f16[8, 4096]
input H : f16[8, 4096]
input alpha : f16[8, 4096]
t4, t5 = kernel(X, H, alpha, grid=[8], forloop=1, threads=128) {
    t1 = iter(X, imap=[0])
    t2 = iter(H, imap=[0])
    t3 = iter(alpha, imap=[0])
    t4 = t2 - t1
    t5 = sqr(t4)
    t6 = sum(t5, dim=1)
    t7 = t6 / 4096
    t8 = sqrt(t7)
    t9 = t4 / t8
    t10 = t3 * t9
    t11 = t1 + t10
    t12 = accum(t11)
    t13 = sqr(t12)
    save(t12, omap=[0])
    save(t13, omap=[0])
}
t6 = sum(t5, dim=1)
t7 = t6 / 4096
t8 = sqrt(t7)
O = t4 / t8
output O
