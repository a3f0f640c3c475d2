# program: tests/ugraphs/programs/mm.mu
# near miss of tests/ugraphs/good/mm.mu: a stray factor inside the loop
input X : f32[64, 64]
input W : f32[64, 64]
O = kernel(X, W, grid=[4], forloop=4) {
    x = iter(X, fmap=1)
    w = iter(W, imap=[1], fmap=0)
    save(accum(matmul(x, w) * 2), omap=[1])
}
output O
