input Q : f16[128, 1, 64]
input K : f16[128, 64, 512]
input V : f16[128, 512, 64]
O = kernel(Q, K, V, grid=[128], forloop=1, threads=128) {
    t1 = iter(Q, imap=[0])
    t2 = iter(K, imap=[0])
    t3 = iter(V, imap=[0])
    t4 = t1 / 8
    t5 = matmul(t4, t2)
    t6 = exp(t5)
    t7 = sum(t6, dim=2)
    t8 = matmul(t6, t3)
    t9 = t8 / t7
    t10 = accum(t9)
    save(t10, omap=[0])
}
output O
