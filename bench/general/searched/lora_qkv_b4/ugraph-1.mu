input X : f16[4, 2048]
input W : f16[2048, 6144]
input A : f16[2048, 16]
input B : f16[16, 6144]
t4 = kernel(X, W, grid=[96], forloop=32, threads=128) {
    t0 = iter(X, fmap=1)
    t1 = iter(W, imap=[1], fmap=0)
    t2 = matmul(t0, t1)
    t3 = accum(t2)
    save(t3, omap=[1])
}
t5 = kernel(X, A, grid=[8], forloop=4, threads=128) {
    t0 = iter(X, imap=[1], fmap=1)
    t1 = iter(A, imap=[0], fmap=0)
    t2 = matmul(t0, t1)
    t3 = accum(t2)
    t4 = reshape(t3, shape=[1, 4, 16])
    save(t4, omap=[0])
}
t6 = kernel(t5, grid=[1], forloop=1, threads=128) {
    t0 = iter(t5)
    t1 = sum(t0, dim=0)
    t2 = reshape(t1, shape=[4, 16])
    t3 = accum(t2)
    save(t3)
}
O = kernel(t4, t6, B, grid=[96], forloop=1, threads=128) {
    t0 = iter(t4, imap=[1])
    t1 = iter(t6)
    t2 = iter(B, imap=[1])
    t3 = matmul(t1, t2)
    t4 = accum(t3)
    t6 = t4 * 2
    t7 = t0 + t6
    save(t7, omap=[1])
}
output O
