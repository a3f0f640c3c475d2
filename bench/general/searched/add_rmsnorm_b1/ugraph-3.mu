input X : f16[1, 8192]
input R : f16[1, 8192]
input G : f16[8192]
O = kernel(X, R, G, grid=[1], forloop=1, threads=128) {
    t1 = iter(X)
    t2 = iter(R)
    t3 = iter(G)
    t4 = t1 + t2
    t5 = accum(t3)
    t6 = sqr(t4)
    t7 = sum(t6, dim=1)
    t8 = t7 / 8192
    t9 = sqrt(t8)
    t10 = t4 / t9
    t11 = accum(t10)
    t12 = t5 * t11
    save(t12)
}
output O
