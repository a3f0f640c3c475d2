input X : f16[8, 4096]
input W1 : f16[4096, 4096]
input W2 : f16[4096, 4096]
t3 = matmul(X, W1)
v4 = silu(t3)
O = kernel(X, W2, v4, grid=[128], forloop=8, threads=128) {
    t0 = iter(X, fmap=1)
    t1 = iter(W2, imap=[1], fmap=0)
    t2 = iter(v4, imap=[1])
    t3 = matmul(t0, t1)
    t4 = t2 * t3
    t5 = accum(t4)
    save(t5, omap=[1])
}
output O
