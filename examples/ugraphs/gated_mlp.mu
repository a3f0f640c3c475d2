# GatedMLP as one kernel, for examples/gated_mlp.mu: O = silu(X W1) * (X W2).
# 64 blocks each own 64 columns of W1, W2 and O; the loop walks the 4096-deep reduction in
# 64 steps, accumulating both matmuls; silu and the product run after the loop, in registers.
input X : f16[8, 4096]
input W1 : f16[4096, 4096]
input W2 : f16[4096, 4096]
O = kernel(X, W1, W2, grid=[64], forloop=64, threads=128) {
    x = iter(X, fmap=1)
    a = iter(W1, imap=[1], fmap=0)
    b = iter(W2, imap=[1], fmap=0)
    p = accum(matmul(x, a))
    q = accum(matmul(x, b))
    save(silu(p) * q, omap=[1])
}
output O
