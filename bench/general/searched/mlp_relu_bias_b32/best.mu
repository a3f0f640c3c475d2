input X : f16[32, 1024]
input W1 : f16[1024, 4096]
input B1 : f16[4096]
input W2 : f16[4096, 1024]
input B2 : f16[1024]
t5 = kernel(X, W1, grid=[64, 4], forloop=4, threads=128) {
    t0 = iter(X, imap=[-1, 1], fmap=1)
    t1 = iter(W1, imap=[1, 0], fmap=0)
    t2 = matmul(t0, t1)
    t3 = accum(t2)
    t4 = reshape(t3, shape=[1, 32, 64])
    save(t4, omap=[2, 0])
}
t6 = kernel(t5, grid=[256], forloop=1, threads=128) {
    t0 = iter(t5, imap=[2])
    t1 = sum(t0, dim=0)
    t2 = reshape(t1, shape=[32, 16])
    t3 = accum(t2)
    save(t3, omap=[1])
}
t7 = kernel(t6, B1, W2, grid=[16, 16], forloop=4, threads=128) {
    t0 = iter(t6, imap=[-1, 1], fmap=1)
    t1 = iter(B1, imap=[-1, 0], fmap=0)
    t2 = t0 + t1
    t3 = relu(t2)
    t4 = iter(W2, imap=[1, 0], fmap=0)
    t5 = matmul(t3, t4)
    t6 = accum(t5)
    t7 = reshape(t6, shape=[1, 32, 64])
    save(t7, omap=[2, 0])
}
O = kernel(t7, B2, grid=[64], forloop=1, threads=128) {
    t0 = iter(t7, imap=[2])
    t1 = sum(t0, dim=0)
    t2 = reshape(t1, shape=[32, 16])
    t3 = accum(t2)
    t4 = iter(B2, imap=[0])
    t5 = t3 + t4
    save(t5, omap=[1])
}
output O
