# program: tests/verify/programs/mm.mu
# expect: 0
# class: layout
# why: matmul: grid of 2 over columns, K in 4 iterations
input X : f32[16, 32]
input W : f32[32, 16]
O = kernel(X, W, grid=[2], forloop=4) {
    x = iter(X, fmap=1)
    w = iter(W, imap=[1], fmap=0)
    save(accum(matmul(x, w)), omap=[1])
}
output O
