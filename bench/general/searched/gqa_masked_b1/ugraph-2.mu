input Q : f16[8, 32, 64]
input K : f16[8, 64, 2048]
input V : f16[8, 2048, 64]
input M : f16[1, 32, 2048]
t4 = kernel(Q, K, M, grid=[2, 64], forloop=1, threads=128) {
    t1 = iter(Q, imap=[0])
    t2 = iter(K, imap=[0, 2])
    t3 = iter(M, imap=[-1, 2])
    t4 = accum(t1)
    t5 = accum(t2)
    t6 = accum(t3)
    t7 = t4 * 0.125
    t8 = matmul(t7, t5)
    t9 = t6 + t8
    t10 = exp(t9)
    save(t10, omap=[0, 2])
}
t5 = sum(t4, dim=2)
t6 = t4 / t5
O = matmul(t6, V)
output O
