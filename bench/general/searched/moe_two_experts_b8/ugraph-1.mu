input X : f16[8, 1024]
input P1 : f16[8, 1]
input P2 : f16[8, 1]
input A1 : f16[1024, 2048]
input B1 : f16[2048, 1024]
input A2 : f16[1024, 2048]
input B2 : f16[2048, 1024]
t7 = kernel(X, A1, grid=[32, 4], forloop=4, threads=128) {
    t0 = iter(X, imap=[-1, 1], fmap=1)
    t1 = iter(A1, imap=[1, 0], fmap=0)
    t2 = matmul(t0, t1)
    t3 = accum(t2)
    t4 = reshape(t3, shape=[1, 8, 64])
    save(t4, omap=[2, 0])
}
t8 = kernel(t7, grid=[128], forloop=1, threads=128) {
    t0 = iter(t7, imap=[2])
    t1 = sum(t0, dim=0)
    t2 = reshape(t1, shape=[8, 16])
    t3 = accum(t2)
    t4 = silu(t3)
    save(t4, omap=[1])
}
t9 = kernel(X, A2, grid=[32, 4], forloop=4, threads=128) {
    t0 = iter(X, imap=[-1, 1], fmap=1)
    t1 = iter(A2, imap=[1, 0], fmap=0)
    t2 = matmul(t0, t1)
    t3 = accum(t2)
    t4 = reshape(t3, shape=[1, 8, 64])
    save(t4, omap=[2, 0])
}
t10 = kernel(t9, grid=[128], forloop=1, threads=128) {
    t0 = iter(t9, imap=[2])
    t1 = sum(t0, dim=0)
    t2 = reshape(t1, shape=[8, 16])
    t3 = accum(t2)
    t4 = silu(t3)
    save(t4, omap=[1])
}
t11, t12 = kernel(t8, B1, t10, B2, grid=[16, 8], forloop=4, threads=128) {
    t0 = iter(t8, imap=[-1, 1], fmap=1)
    t1 = iter(B1, imap=[1, 0], fmap=0)
    t2 = matmul(t0, t1)
    t3 = accum(t2)
    t4 = reshape(t3, shape=[1, 8, 64])
    save(t4, omap=[2, 0])
    t6 = iter(t10, imap=[-1, 1], fmap=1)
    t7 = iter(B2, imap=[1, 0], fmap=0)
    t8 = matmul(t6, t7)
    t9 = accum(t8)
    t10 = reshape(t9, shape=[1, 8, 64])
    save(t10, omap=[2, 0])
}
O = kernel(P1, t11, P2, t12, grid=[64], forloop=1, threads=128) {
    t0 = iter(P1)
    t1 = iter(t11, imap=[2])
    t2 = sum(t1, dim=0)
    t3 = reshape(t2, shape=[8, 16])
    t4 = accum(t3)
    t5 = t0 * t4
    t6 = iter(P2)
    t7 = iter(t12, imap=[2])
    t8 = sum(t7, dim=0)
    t9 = reshape(t8, shape=[8, 16])
    t10 = accum(t9)
    t11 = t6 * t10
    t12 = t5 + t11
    save(t12, omap=[1])
}
output O
