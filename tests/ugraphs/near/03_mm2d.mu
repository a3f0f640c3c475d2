# program: tests/ugraphs/programs/mm.mu
# near miss of tests/ugraphs/good/mm2d.mu: swapped operands
input X : f32[64, 64]
input W : f32[64, 64]
O = kernel(X, W, grid=[4, 4], forloop=4) {
    x = iter(X, imap=[-1, 0], fmap=1)
    w = iter(W, imap=[1], fmap=0)
    save(accum(matmul(w, x)), omap=[1, 0])
}
output O
