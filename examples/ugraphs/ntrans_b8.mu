# nTrans as one kernel, for examples/ntrans_b8.mu: O = rms(X + alpha * rms(H - X)).
# One block per row (grid = b); both RMSNorms and the update run on the row in the block.
input X : f16[8, 4096]
input H : f16[8, 4096]
input alpha : f16[8, 4096]
O = kernel(X, H, alpha, grid=[8], forloop=1, threads=128) {
    x = iter(X, imap=[0])
    h = iter(H, imap=[0])
    a = iter(alpha, imap=[0])
    d = h - x
    y = x + a * (d / sqrt(sum(sqr(d), dim=1) / 4096))
    save(accum(y / sqrt(sum(sqr(y), dim=1) / 4096)), omap=[0])
}
output O
