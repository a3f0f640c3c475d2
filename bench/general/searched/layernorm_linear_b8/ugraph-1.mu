input X : f16[8, 2048]
input G : f16[2048]
input B : f16[2048]
input W : f16[2048, 2048]
Y = kernel(X, G, B, grid=[8], forloop=1, threads=128) {
    t0 = iter(X, imap=[0])
    t1 = sum(t0, dim=1)
    t3 = t1 / 2048
    t4 = t0 - t3
    t5 = sqr(t4)
    t6 = sum(t5, dim=1)
    t8 = t6 / 2048
    t10 = t8 + 0.00001
    t11 = sqrt(t10)
    t12 = t4 / t11
    t13 = iter(G)
    t14 = t12 * t13
    t15 = iter(B)
    t16 = t14 + t15
    t17 = accum(t16)
    save(t17, omap=[0])
}
t5 = kernel(Y, W, grid=[32, 4], forloop=8, threads=128) {
    t0 = iter(Y, imap=[-1, 1], fmap=1)
    t1 = iter(W, imap=[1, 0], fmap=0)
    t2 = matmul(t0, t1)
    t3 = accum(t2)
    t4 = reshape(t3, shape=[1, 8, 64])
    save(t4, omap=[2, 0])
}
O = kernel(t5, grid=[128], forloop=1, threads=128) {
    t0 = iter(t5, imap=[2])
    t1 = sum(t0, dim=0)
    t2 = reshape(t1, shape=[8, 16])
    t3 = accum(t2)
    save(t3, omap=[1])
}
output O
