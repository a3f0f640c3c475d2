input X : f16[4, 3072]
input W1 : f16[3072, 3072]
input B1 : f16[3072]
input W2 : f16[3072, 3072]
input B2 : f16[3072]
t5 = matmul(X, W1)
v6 = B1 + t5
t7, t8 = kernel(X, W2, v6, grid=[96], forloop=1, threads=128) {
    t0 = iter(X)
    t1 = iter(W2, imap=[1])
    t2 = iter(v6, imap=[1])
    t3 = matmul(t0, t1)
    t4 = silu(t2)
    t5 = accum(t2)
    t6 = t3 * t4
    t7 = silu(t5)
    t8 = accum(t6)
    save(t7, omap=[1])
    save(t8, omap=[1])
}
t9 = B2 * t7
O = t8 + t9
output O
