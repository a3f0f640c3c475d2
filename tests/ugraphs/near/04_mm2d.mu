# program: tests/ugraphs/programs/mm.mu
# near miss of tests/ugraphs/good/mm2d.mu: omap swapped: blocks write their tiles to transposed positions
input X : f32[64, 64]
input W : f32[64, 64]
O = kernel(X, W, grid=[4, 4], forloop=4) {
    x = iter(X, imap=[-1, 0], fmap=1)
    w = iter(W, imap=[1], fmap=0)
    save(accum(matmul(x, w)), omap=[0, 1])
}
output O
