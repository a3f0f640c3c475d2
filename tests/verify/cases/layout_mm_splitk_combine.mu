# program: tests/verify/programs/mm.mu
# expect: 3
# class: layout
# why: split-K combine reshapes the stacked partials wrongly: adds row pairs of one half
input X : f32[16, 32]
input W : f32[32, 16]
P = kernel(X, W, grid=[2, 2]) {
    x = iter(X, imap=[-1, 1])
    w = iter(W, imap=[1, 0])
    save(accum(matmul(x, w)), omap=[1, 0])
}
O = reshape(sum(reshape(P, shape=[16, 2, 16]), dim=1), shape=[16, 16])
output O
