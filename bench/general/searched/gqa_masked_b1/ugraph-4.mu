input Q : f16[8, 32, 64]
input K : f16[8, 64, 2048]
input V : f16[8, 2048, 64]
input M : f16[1, 32, 2048]
t4 = kernel(Q, K, M, grid=[2, 64], forloop=1, threads=128) {
    t1 = iter(Q, imap=[0])
    t2 = iter(K, imap=[0, 2])
    t3 = iter(M, imap=[-1, 2])
    t4 = matmul(t1, t2)
    t5 = accum(t3)
    t6 = t4 * 0.125
    t7 = accum(t6)
    t8 = t5 + t7
    t9 = exp(t8)
    save(t9, omap=[0, 2])
}
t5 = sum(t4, dim=2)
t6 = t4 / t5
O = matmul(t6, V)
output O
