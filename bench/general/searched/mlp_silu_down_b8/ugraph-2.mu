input X : f16[8, 2048]
input W1 : f16[2048, 8192]
input W2 : f16[8192, 2048]
t3 = kernel(X, W1, grid=[64, 4], forloop=8, threads=128) {
    t0 = iter(X, imap=[-1, 1], fmap=1)
    t1 = iter(W1, imap=[1, 0], fmap=0)
    t2 = matmul(t0, t1)
    t3 = accum(t2)
    t4 = reshape(t3, shape=[1, 8, 128])
    save(t4, omap=[2, 0])
}
t4 = kernel(t3, grid=[512], forloop=1, threads=128) {
    t0 = iter(t3, imap=[2])
    t1 = sum(t0, dim=0)
    t2 = reshape(t1, shape=[8, 16])
    t3 = accum(t2)
    t4 = silu(t3)
    save(t4, omap=[1])
}
t5 = kernel(t4, W2, grid=[16, 16], forloop=8, threads=128) {
    t0 = iter(t4, imap=[-1, 1], fmap=1)
    t1 = iter(W2, imap=[1, 0], fmap=0)
    t2 = matmul(t0, t1)
    t3 = accum(t2)
    t4 = reshape(t3, shape=[1, 8, 128])
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
