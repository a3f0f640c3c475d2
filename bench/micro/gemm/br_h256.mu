input X : f16[128, 1024]
input W : f16[1024, 4096]
input Bias : f16[4096]
O = kernel(X, W, Bias, grid=[64, 2], forloop=8, threads=256) {
    t0 = iter(X, imap=[-1, 0], fmap=1)
    t1 = iter(W, imap=[1], fmap=0)
    t2 = matmul(t0, t1)
    t3 = accum(t2)
    t4 = iter(Bias, imap=[0])
    t5 = t3 + t4
    t6 = relu(t5)
    save(t6, omap=[1, 0])
}
output O
