input X : f16[16, 256]
input W : f16[256, 4096]
input A : f16[256, 16]
input B : f16[16, 4096]
O = kernel(X, W, A, B, grid=[128], forloop=1, threads=128) {
    t0 = iter(X)
    t1 = iter(W, imap=[1])
    t2 = iter(A)
    t3 = iter(B, imap=[1])
    t4 = matmul(t0, t1)
    t5 = matmul(t2, t3)
    t6 = accum(t4)
    t7 = matmul(t0, t5)
    t8 = accum(t7)
    t9 = t6 + t8
    save(t9, omap=[1])
}
output O
