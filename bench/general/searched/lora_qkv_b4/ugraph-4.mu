input X : f16[4, 2048]
input W : f16[2048, 6144]
input A : f16[2048, 16]
input B : f16[16, 6144]
t5 = matmul(X, A)
t6 = t5 * 2
v7 = matmul(t6, B)
O = kernel(X, W, v7, grid=[128], forloop=1, threads=128) {
    t0 = iter(X)
    t1 = iter(W, imap=[1])
    t2 = iter(v7, imap=[1])
    t3 = matmul(t0, t1)
    t4 = accum(t2)
    t5 = accum(t3)
    t6 = t4 + t5
    save(t6, omap=[1])
}
output O
