input X : f16[8, 2048]
input W1 : f16[2048, 8192]
input W3 : f16[2048, 8192]
input W2 : f16[8192, 2048]
t4, t5 = kernel(X, W1, W3, grid=[128, 2], forloop=16, threads=128) {
    t0 = iter(X, imap=[-1, 1], fmap=1)
    t1 = iter(W1, imap=[1, 0], fmap=0)
    t2 = matmul(t0, t1)
    t3 = accum(t2)
    t4 = reshape(t3, shape=[1, 8, 64])
    save(t4, omap=[2, 0])
    t6 = iter(X, imap=[-1, 1], fmap=1)
    t7 = iter(W3, imap=[1, 0], fmap=0)
    t8 = matmul(t6, t7)
    t9 = accum(t8)
    t10 = reshape(t9, shape=[1, 8, 64])
    save(t10, omap=[2, 0])
}
t6 = kernel(t4, t5, grid=[512], forloop=2, threads=128) {
    t0 = iter(t4, imap=[2], fmap=0)
    t1 = reshape(t0, shape=[8, 16])
    t2 = accum(t1)
    t3 = silu(t2)
    t4 = iter(t5, imap=[2], fmap=0)
    t5 = reshape(t4, shape=[8, 16])
    t6 = accum(t5)
    t7 = t3 * t6
    save(t7, omap=[1])
}
t7 = kernel(t6, W2, grid=[32, 8], forloop=16, threads=128) {
    t0 = iter(t6, imap=[-1, 1], fmap=1)
    t1 = iter(W2, imap=[1, 0], fmap=0)
    t2 = matmul(t0, t1)
    t3 = accum(t2)
    t4 = reshape(t3, shape=[1, 8, 64])
    save(t4, omap=[2, 0])
}
O = kernel(t7, grid=[128], forloop=8, threads=128) {
    t0 = iter(t7, imap=[2], fmap=0)
    t1 = reshape(t0, shape=[8, 16])
    t2 = accum(t1)
    save(t2, omap=[1])
}
output O
