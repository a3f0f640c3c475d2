# program: tests/verify/programs/mm.mu
# expect: 0
# class: layout
# why: split-K: blocks along y own a K half, partial tiles stacked, then summed
input X : f32[16, 32]
input W : f32[32, 16]
P = kernel(X, W, grid=[2, 2]) {
    x = iter(X, imap=[-1, 1])
    w = iter(W, imap=[1, 0])
    save(accum(matmul(x, w)), omap=[1, 0])
}
O = reshape(sum(reshape(P, shape=[2, 16, 16]), dim=0), shape=[16, 16])
output O
