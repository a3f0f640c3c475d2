input X : f16[1, 8192]
input R : f16[1, 8192]
input G : f16[8192]
O = kernel(X, R, G, grid=[1], forloop=1, threads=128) {
    t1 = iter(X)
    t2 = iter(R)
    t3 = iter(G)
    t4 = t1 + t2
    t5 = accum(t3)
    t6 = accum(t4)
    t7 = sqr(t6)
    t8 = sum(t7, dim=1)
    t9 = t8 / 8192
    t10 = sqrt(t9)
    t11 = t6 / t10
    t12 = t5 * t11
    save(t12)
}
output O
