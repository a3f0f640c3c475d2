input X : f16[4, 3072]
input W1 : f16[3072, 3072]
input B1 : f16[3072]
input W2 : f16[3072, 3072]
input B2 : f16[3072]
t5, t6 = kernel(X, W1, W2, grid=[48, 8], forloop=6, threads=128) {
    t0 = iter(X, imap=[-1, 1], fmap=1)
    t1 = iter(W1, imap=[1, 0], fmap=0)
    t2 = matmul(t0, t1)
    t3 = accum(t2)
    t4 = reshape(t3, shape=[1, 4, 64])
    save(t4, omap=[2, 0])
    t6 = iter(X, imap=[-1, 1], fmap=1)
    t7 = iter(W2, imap=[1, 0], fmap=0)
    t8 = matmul(t6, t7)
    t9 = accum(t8)
    t10 = reshape(t9, shape=[1, 4, 64])
    save(t10, omap=[2, 0])
}
O = kernel(t5, B1, t6, B2, grid=[192], forloop=1, threads=128) {
    t0 = iter(t5, imap=[2])
    t1 = sum(t0, dim=0)
    t2 = reshape(t1, shape=[4, 16])
    t3 = accum(t2)
    t4 = iter(B1, imap=[0])
    t5 = t3 + t4
    t6 = silu(t5)
    t7 = iter(t6, imap=[2])
    t8 = sum(t7, dim=0)
    t9 = reshape(t8, shape=[4, 16])
    t10 = accum(t9)
    t11 = iter(B2, imap=[0])
    t12 = t10 + t11
    t13 = t6 * t12
    save(t13, omap=[1])
}
output O
