input X : f16[8, 2048]
input W1 : f16[2048, 8192]
input W2 : f16[8192, 2048]
t3 = kernel(X, W1, grid=[128], forloop=8, threads=128) {
    t0 = iter(X, fmap=1)
    t1 = iter(W1, imap=[1], fmap=0)
    t2 = matmul(t0, t1)
    t3 = accum(t2)
    t4 = silu(t3)
    save(t4, omap=[1])
}
O = matmul(t3, W2)
output O
