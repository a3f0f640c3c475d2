# program: tests/verify/programs/rowsum.mu
# expect: 0
# class: layout
# why: row sums over 4 iterations, rows split over 2 blocks
input X : f32[8, 32]
O = kernel(X, grid=[2], forloop=4) {
    x = iter(X, imap=[0], fmap=1)
    save(accum(sum(x, dim=1)), omap=[0])
}
output O
