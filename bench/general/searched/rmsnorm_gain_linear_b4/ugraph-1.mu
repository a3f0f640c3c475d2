input X : f16[4, 2048]
input G : f16[2048]
input W : f16[2048, 6144]
v3 = X * G
O = kernel(X, W, v3, grid=[96], forloop=8, threads=128) {
    t1 = iter(X)
    t2 = iter(W, imap=[1], fmap=0)
    t3 = iter(v3, fmap=1)
    t4 = sqr(t1)
    t5 = matmul(t3, t2)
    t6 = sum(t4, dim=1)
    t7 = t6 / 2048
    t8 = sqrt(t7)
    t9 = t5 / t8
    t10 = accum(t9)
    save(t10, omap=[1])
}
output O
