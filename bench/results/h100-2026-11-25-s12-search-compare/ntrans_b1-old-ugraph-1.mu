input X : f16[1, 4096]
input H : f16[1, 4096]
input alpha : f16[1, 4096]
O = kernel(X, H, alpha, grid=[1], forloop=1, threads=128) {
    t1 = iter(X)
    t2 = iter(H)
    t3 = iter(alpha)
    t4 = accum(t1)
    t5 = t1 - t2
    t6 = sqr(t5)
    t7 = sum(t6, dim=1)
    t8 = t7 / 4096
    t9 = sqrt(t8)
    t10 = t5 / t9
    t11 = t3 * t10
    t12 = accum(t11)
    t13 = t4 - t12
    t14 = sqr(t13)
    t15 = sum(t14, dim=1)
    t16 = t15 / 4096
    t17 = sqrt(t16)
    t18 = t13 / t17
    save(t18)
}
output O
