input X : f16[16, 256]
input W : f16[256, 4096]
input A : f16[256, 16]
input B : f16[16, 4096]
t4 = matmul(X, A)
v5 = matmul(t4, B)
O = kernel(X, W, v5, grid=[128], forloop=1, threads=128) {
    t0 = iter(X)
    t1 = iter(W, imap=[1])
    t2 = iter(v5, imap=[1])
    t3 = accum(t0)
    t4 = accum(t1)
    t5 = accum(t2)
    t6 = matmul(t3, t4)
    t7 = t5 + t6
    save(t7, omap=[1])
}
output O
