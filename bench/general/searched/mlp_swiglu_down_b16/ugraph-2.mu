input X : f16[16, 2048]
input Wg : f16[2048, 8192]
input Wu : f16[2048, 8192]
input Wd : f16[8192, 2048]
t4 = kernel(X, Wg, Wu, grid=[128], forloop=64, threads=128) {
    t0 = iter(X, fmap=1)
    t1 = iter(Wg, imap=[1], fmap=0)
    t2 = iter(Wu, imap=[1], fmap=0)
    t3 = matmul(t0, t1)
    t4 = matmul(t0, t2)
    t5 = accum(t3)
    t6 = accum(t4)
    t7 = silu(t5)
    t8 = t6 * t7
    save(t8, omap=[1])
}
O = matmul(t4, Wd)
output O
