# program: tests/verify/programs/mlp16.mu
# expect: 0
# class: inf
# why: the same MLP as two kernels (gate+up fused, then down): overflows where the program does
input X : f16[1, 256]
input W1 : f16[256, 704]
input W3 : f16[256, 704]
input W2 : f16[704, 256]
H = kernel(X, W1, W3, grid=[8], forloop=8) {
    x = iter(X, fmap=1)
    a = iter(W1, imap=[1], fmap=0)
    b = iter(W3, imap=[1], fmap=0)
    p = accum(matmul(x, a))
    q = accum(matmul(x, b))
    save(silu(p) * q, omap=[1])
}
O = kernel(H, W2, grid=[4], forloop=8) {
    h = iter(H, fmap=1)
    w = iter(W2, imap=[1], fmap=0)
    m = accum(matmul(h, w))
    save(m * 300, omap=[1])
}
output O
