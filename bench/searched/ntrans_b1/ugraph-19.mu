input X : f16[1, 4096]
input H : f16[1, 4096]
input alpha : f16[1, 4096]
v4 = H - X
t5, t6 = kernel(X, alpha, v4, grid=[1], forloop=1, threads=128) {
    t1 = iter(X)
    t2 = iter(alpha)
    t3 = iter(v4)
    t4 = sqr(t3)
    t5 = sum(t4, dim=1)
    t6 = t5 / 4096
    t7 = sqrt(t6)
    t8 = t3 / t7
    t9 = t2 * t8
    t10 = t1 + t9
    t11 = accum(t10)
    t12 = sqr(t11)
    save(t11)
    t14 = sum(t12, dim=1)
    save(t14)
}
t7 = t6 / 4096
t8 = sqrt(t7)
O = t5 / t8
output O
