# program: tests/verify/programs/rmsq.mu
# expect: 3
# class: layout
# why: RMSNorm: the 2 iterations' tiles concatenated along rows, then reshaped back (permuted)
input X : f32[16, 16]
T = kernel(X, grid=[2], forloop=2) {
    x = iter(X, imap=[0], fmap=1)
    xa = accum(x, fmap=0)
    save(xa, omap=[0])
}
O = reshape(T, shape=[16, 16]) / sqrt(sum(sqr(X), dim=1) / 16)
output O
