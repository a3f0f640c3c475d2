# program: tests/verify/programs/rmsq.mu
# expect: 3
# class: layout
# why: RMSNorm reducing over the block's rows (dim 0) instead of the columns
input X : f32[16, 16]
O = kernel(X, grid=[2]) {
    x = iter(X, imap=[0])
    save(accum(x / sqrt(sum(sqr(x), dim=0) / 16)), omap=[0])
}
output O
