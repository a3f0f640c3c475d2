# program: tests/ugraphs/programs/rms_linear.mu
# near miss of tests/ugraphs/good/rms_linear.mu: for-loop range does not match the tile: the norm's iterator does not advance, so the loop adds the whole sum of squares 4 times
input X : f32[4, 64]
input W : f32[64, 32]
O = kernel(X, W, grid=[2], forloop=4) {
    x = iter(X, fmap=1)
    w = iter(W, imap=[1], fmap=0)
    m = accum(matmul(x, w))
    y = iter(X)
    s = accum(sum(sqr(y), dim=1))
    save(m / sqrt(s / 64), omap=[1])
}
output O
