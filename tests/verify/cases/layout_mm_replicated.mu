# program: tests/verify/programs/mm.mu
# expect: 3
# class: layout
# why: 2x2 grid: W's columns split by y, not x, so blocks along x all read the same columns
input X : f32[16, 32]
input W : f32[32, 16]
O = kernel(X, W, grid=[2, 2], forloop=2) {
    x = iter(X, imap=[-1, 0], fmap=1)
    w = iter(W, imap=[-1, 1], fmap=0)
    save(accum(matmul(x, w)), omap=[1, 0])
}
output O
