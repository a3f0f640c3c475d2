input X : f16[8, 4096]
input W1 : f16[4096, 4096]
input W2 : f16[4096, 4096]
O = kernel(X, W1, W2, grid=[128], forloop=8, threads=128) {
    t0 = iter(X, fmap=1)
    t1 = iter(W1, imap=[1], fmap=0)
    t2 = iter(W2, imap=[1], fmap=0)
    t3 = matmul(t0, t1)
    t4 = matmul(t0, t2)
    t5 = accum(t3)
    t6 = accum(t4)
    t7 = silu(t5)
    t8 = t6 * t7
    save(t8, omap=[1])
}
output O
