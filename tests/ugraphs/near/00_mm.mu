# program: tests/ugraphs/programs/mm.mu
# near miss of tests/ugraphs/good/mm.mu: imap on the wrong dim: blocks split W's rows, the loop its columns
input X : f32[64, 64]
input W : f32[64, 64]
O = kernel(X, W, grid=[4], forloop=4) {
    x = iter(X, fmap=1)
    w = iter(W, imap=[0], fmap=1)
    save(accum(matmul(x, w)), omap=[1])
}
output O
