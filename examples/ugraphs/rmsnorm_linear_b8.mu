# Fused RMSNorm + linear (Mirage Figure 3b) for examples/rmsnorm_linear_b8.mu: one kernel.
# Each of 48 blocks owns 128 columns of W and of O; the for-loop walks the 4096-wide hidden
# dimension in 64 steps, accumulating both X W and the sum of squares of X in the same loop;
# the division by the RMS moves after the matmul: O = (X W) / sqrt(sum(X^2) / 4096).
input X : f16[16, 4096]
input W : f16[4096, 6144]
O = kernel(X, W, grid=[48], forloop=64, threads=128) {
    x = iter(X, imap=[-1], fmap=1)
    w = iter(W, imap=[1], fmap=0)
    m = accum(matmul(x, w))
    s = accum(sum(sqr(x), dim=1))
    save(m / sqrt(s / 4096), omap=[1])
}
output O
