input X : f16[16, 256]
input W : f16[256, 4096]
input A : f16[256, 16]
input B : f16[16, 4096]
v4 = matmul(X, A)
O = kernel(X, W, B, v4, grid=[2, 64], forloop=1, threads=128) {
    t0 = iter(X, imap=[0])
    t1 = iter(W, imap=[-1, 1])
    t2 = iter(B, imap=[-1, 1])
    t3 = iter(v4, imap=[0])
    t4 = accum(t0)
    t5 = accum(t1)
    t6 = matmul(t3, t2)
    t7 = matmul(t4, t5)
    t8 = accum(t6)
    t9 = t7 + t8
    save(t9, omap=[0, 1])
}
output O
