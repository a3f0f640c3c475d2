input X : f16[1, 4096]
input G : f16[4096]
input W : f16[4096, 4096]
t3 = kernel(X, G, grid=[1], forloop=1, threads=128) {
    t2 = iter(X)
    t3 = iter(G)
    t4 = sqr(t2)
    t5 = t2 * t3
    t6 = t4 / 4096
    t7 = sum(t6, dim=1)
    t8 = t7 + 0.000001
    t9 = sqrt(t8)
    t10 = t5 / t9
    t11 = accum(t10)
    save(t11)
}
O = matmul(t3, W)
output O
