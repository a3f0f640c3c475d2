input X : f16[8, 1024]
input W1 : f16[1024, 4096]
input W2 : f16[4096, 1024]
t3 = kernel(X, W1, grid=[128], forloop=1, threads=128) {
    t0 = iter(X)
    t1 = iter(W1, imap=[1])
    t2 = accum(t0)
    t3 = accum(t1)
    t4 = matmul(t2, t3)
    t5 = silu(t4)
    save(t5, omap=[1])
}
t4 = matmul(t3, W2)
O = X + t4
output O
