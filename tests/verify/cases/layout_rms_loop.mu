# program: tests/verify/programs/rmsq.mu
# expect: 0
# class: layout
# why: RMSNorm with the row in 2 iterations: X concatenated back by accum(fmap), squares summed
input X : f32[16, 16]
O = kernel(X, grid=[2], forloop=2) {
    x = iter(X, imap=[0], fmap=1)
    xa = accum(x, fmap=1)
    s = accum(sum(sqr(x), dim=1))
    save(xa / sqrt(s / 16), omap=[0])
}
output O
