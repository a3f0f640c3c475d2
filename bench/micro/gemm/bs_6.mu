input X : f16[128, 1024]
input W : f16[1024, 4096]
input Bias : f16[4096]
P = kernel(X, W, grid=[32, 2, 2], forloop=4, threads=256) {
    t0 = iter(X, imap=[-1, 0, 1], fmap=1)
    t1 = iter(W, imap=[1, -1, 0], fmap=0)
    t2 = matmul(t0, t1)
    t3 = accum(t2)
    t4 = reshape(t3, shape=[1, 64, 128])
    save(t4, omap=[2, 1, 0])
}
O = kernel(P, Bias, grid=[64, 2], forloop=2, threads=128) {
    t0 = iter(P, imap=[2, 1], fmap=0)
    t1 = reshape(t0, shape=[64, 64])
    t2 = accum(t1)
    t4 = iter(Bias, imap=[0])
    t5 = t2 + t4
    t6 = relu(t5)
    save(t6, omap=[1, 0])
}
output O
