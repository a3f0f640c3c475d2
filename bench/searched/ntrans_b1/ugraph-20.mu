input X : f16[1, 4096]
input H : f16[1, 4096]
input alpha : f16[1, 4096]
t4, t5 = kernel(X, H, alpha, grid=[1], forloop=1, threads=128) {
    t1 = iter(X)
    t2 = iter(H)
    t3 = iter(alpha)
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
    save(t12)
    save(t13)
}
t6 = sum(t5, dim=1)
t7 = t6 / 4096
t8 = sqrt(t7)
O = t4 / t8
output O
