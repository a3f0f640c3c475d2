input X : f16[8, 4096]
input W1 : f16[4096, 4096]
input W2 : f16[4096, 4096]
v3 = matmul(X, W1)
O = kernel(X, W2, v3, grid=[128], forloop=64, threads=128) {
    t0 = iter(X, fmap=1)
    t1 = iter(W2, imap=[1], fmap=0)
    t2 = iter(v3, imap=[1])
    t3 = matmul(t0, t1)
    t4 = silu(t2)
    t5 = t3 * t4
    t6 = accum(t5)
    save(t6, omap=[1])
}
output O
