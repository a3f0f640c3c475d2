input X : f16[1, 4096]
input G : f16[4096]
input W : f16[4096, 4096]
t3 = kernel(X, G, grid=[1], forloop=1, threads=128) {
    t2 = iter(X)
    t3 = iter(G)
    t4 = sqr(t2)
    t5 = sum(t4, dim=1)
    t6 = t5 / 4096
    t7 = t6 + 0.000001
    t8 = sqrt(t7)
    t9 = t3 / t8
    t10 = t2 * t9
    t11 = accum(t10)
    save(t11)
}
O = matmul(t3, W)
output O
