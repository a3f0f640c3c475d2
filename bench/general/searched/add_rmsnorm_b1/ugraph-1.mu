input X : f16[1, 8192]
input R : f16[1, 8192]
input G : f16[8192]
O = kernel(X, R, G, grid=[1], forloop=1, threads=128) {
    t1 = iter(X)
    t2 = iter(R)
    t3 = iter(G)
    t4 = accum(t1)
    t5 = accum(t2)
    t6 = accum(t3)
    t7 = t4 + t5
    t8 = sqr(t7)
    t9 = sum(t8, dim=1)
    t10 = t9 / 8192
    t11 = sqrt(t10)
    t12 = t7 / t11
    t13 = t6 * t12
    save(t13)
}
output O
