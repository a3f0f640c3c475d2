input X : f16[1, 8192]
input R : f16[1, 8192]
input G : f16[8192]
O = kernel(X, R, G, grid=[1], forloop=1, threads=128) {
    t1 = iter(X)
    t2 = iter(R)
    t3 = iter(G)
    t4 = t1 + t2
    t5 = sqr(t4)
    t6 = sum(t5, dim=1)
    t7 = t6 / 8192
    t8 = sqrt(t7)
    t9 = t4 / t8
    t10 = t3 * t9
    t11 = accum(t10)
    save(t11)
}
output O
