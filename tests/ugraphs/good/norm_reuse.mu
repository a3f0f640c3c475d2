# program: tests/ugraphs/programs/rms_linear.mu
# Regression (found by make bench on the search's RMSNorm+Linear rank 37): a one-iteration
# accumulator read twice (by the norm's sum and by the division) is computed where it is read;
# the tile it reads must stay live until its last reader, not only its first.
input X : f32[4, 64]
input W : f32[64, 32]
t2 = kernel(X, grid=[2], forloop=1) {
    t1 = iter(X, imap=[0])
    t2 = accum(t1)
    t3 = sqr(t2)
    t4 = sum(t3, dim=1)
    t5 = t4 / 64
    t6 = sqrt(t5)
    t7 = t2 / t6
    save(t7, omap=[0])
}
O = matmul(t2, W)
output O
