# program: tests/verify/programs/rmsq.mu
# expect: 0
# class: layout
# why: RMSNorm with rows split over 2 blocks
input X : f32[16, 16]
O = kernel(X, grid=[2]) {
    x = iter(X, imap=[0])
    save(accum(x / sqrt(sum(sqr(x), dim=1) / 16)), omap=[0])
}
output O
