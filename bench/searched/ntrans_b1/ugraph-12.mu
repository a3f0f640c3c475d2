input X : f16[1, 4096]
input H : f16[1, 4096]
input alpha : f16[1, 4096]
v3 = X - H
O = kernel(X, alpha, v3, grid=[1], forloop=1, threads=128) {
    t1 = iter(X)
    t2 = iter(alpha)
    t3 = iter(v3)
    t4 = accum(t1)
    t5 = accum(t2)
    t6 = accum(t3)
    t7 = sqr(t6)
    t8 = sum(t7, dim=1)
    t9 = t8 / 4096
    t10 = sqrt(t9)
    t11 = t6 / t10
    t12 = t5 * t11
    t13 = t4 - t12
    t14 = sqr(t13)
    t15 = sum(t14, dim=1)
    t16 = t15 / 4096
    t17 = sqrt(t16)
    t18 = t13 / t17
    save(t18)
}
output O
