input X : f16[4, 2048]
input W : f16[2048, 6144]
input A : f16[2048, 16]
input B : f16[16, 6144]
t4 = matmul(X, A)
v5 = matmul(t4, B)
O = kernel(X, W, v5, grid=[128], forloop=1, threads=128) {
    t1 = iter(X)
    t2 = iter(W, imap=[1])
    t3 = iter(v5, imap=[1])
    t4 = matmul(t1, t2)
    t5 = t3 * 2
    t6 = accum(t4)
    t7 = accum(t5)
    t8 = t6 + t7
    save(t8, omap=[1])
}
output O
