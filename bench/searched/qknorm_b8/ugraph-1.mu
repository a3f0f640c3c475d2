input Q : f16[16, 256, 64]
input K : f16[16, 64, 4096]
input V : f16[16, 4096, 64]
v3, v4 = kernel(Q, K, V, grid=[16, 8], forloop=4, threads=128) {
    t1 = iter(Q, imap=[0])
    t2 = iter(K, imap=[0, 2], fmap=2)
    t3 = iter(V, imap=[0, 1], fmap=1)
    t4 = sqr(t1)
    t5 = sum(t4, dim=2)
    t6 = t5 / 64
    t7 = sqrt(t6)
    t8 = t1 / t7
    t9 = sqr(t2)
    t10 = sum(t9, dim=1)
    t11 = t10 / 64
    t12 = sqrt(t11)
    t13 = t2 / t12
    t14 = matmul(t8, t13)
    t15 = exp(t14)
    t16 = sum(t15, dim=2)
    t17 = matmul(t15, t3)
    t18 = accum(t16)
    t19 = accum(t17)
    t20 = reshape(t18, shape=[1, 256, 1, 1])
    save(t20, omap=[0, 3])
    t22 = reshape(t19, shape=[1, 256, 64, 1])
    save(t22, omap=[0, 3])
}
O = kernel(v3, v4, grid=[16, 8], forloop=1, threads=128) {
    t0 = iter(v3, imap=[0, 1])
    t1 = iter(v4, imap=[0, 1])
    t2 = sum(t0, dim=3)
    t3 = accum(t1)
    t4 = accum(t2)
    t5 = sum(t3, dim=3)
    t6 = reshape(t4, shape=[1, 32, 1])
    t7 = reshape(t5, shape=[1, 32, 64])
    t8 = t7 / t6
    save(t8, omap=[0, 1])
}
output O
