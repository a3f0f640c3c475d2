input X : f16[4, 3072]
input W1 : f16[3072, 3072]
input B1 : f16[3072]
input W2 : f16[3072, 3072]
input B2 : f16[3072]
v5 = matmul(X, W1)
t6, t7 = kernel(X, B1, v5, grid=[1], forloop=1, threads=128) {
    t0 = iter(X)
    t1 = iter(B1)
    t2 = iter(v5)
    t3 = accum(t0)
    t4 = t1 + t2
    save(t3)
    t6 = silu(t4)
    t7 = accum(t6)
    save(t7)
}
t8 = matmul(t6, W2)
t9 = B2 + t8
O = t7 * t9
output O
