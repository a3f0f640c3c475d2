# program: tests/ugraphs/programs/mm.mu
input X : f32[64, 64]
input W : f32[64, 64]
O = kernel(X, W, grid=[4], forloop=4) {
    x = iter(X, fmap=1)
    w = iter(W, imap=[1], fmap=0)
    save(accum(matmul(x, w)), omap=[1])
}
output O
