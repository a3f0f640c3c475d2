# program: tests/verify/programs/rms100.mu
# expect: 0
# class: sqrt
# why: 10*X/sqrt(sum(X^2)) in a kernel, rows split over 2 blocks
input X : f32[4, 100]
O = kernel(X, grid=[2]) {
    x = iter(X, imap=[0])
    save(accum(x * 10 / sqrt(sum(sqr(x), dim=1))), omap=[0])
}
output O
