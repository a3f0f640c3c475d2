# program: examples/qknorm_b1.mu
# The search's QKNorm b=1 design: kernel 1 writes normalised scores in 64-column tiles of
# [2, 256, 4096]; the buffer stays row-major (a grid that cuts a dim into tiles wider than
# one keeps it in place), so each block writes whole 256-byte row pieces.
input Q : f16[2, 256, 64]
input K : f16[2, 64, 4096]
input V : f16[2, 4096, 64]
v3 = kernel(Q, K, grid=[2, 64], forloop=1, threads=128) {
    t1 = iter(Q, imap=[0])
    t2 = iter(K, imap=[0, 2])
    t3 = sqr(t1)
    t4 = sqr(t2)
    t5 = sum(t4, dim=1)
    t6 = t5 / 64
    t7 = sqrt(t6)
    t8 = t2 / t7
    t9 = t3 / 64
    t10 = matmul(t1, t8)
    t11 = sum(t9, dim=2)
    t12 = sqrt(t11)
    t13 = t10 / t12
    t14 = accum(t13)
    save(t14, omap=[0, 2])
}
O = kernel(V, v3, grid=[2, 64], forloop=8, threads=128) {
    t0 = iter(V, imap=[0], fmap=1)
    t1 = iter(v3, imap=[0, 1], fmap=2)
    t2 = exp(t1)
    t3 = accum(t1, fmap=2)
    t4 = matmul(t2, t0)
    t5 = exp(t3)
    t6 = accum(t4)
    t7 = sum(t5, dim=2)
    t8 = t6 / t7
    save(t8, omap=[0, 1])
}
output O
