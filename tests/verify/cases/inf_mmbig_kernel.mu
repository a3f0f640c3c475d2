# program: tests/verify/programs/mmbig.mu
# expect: 0
# class: inf
# why: matmul times 10^54 in a kernel: every element +-inf in f32, as in the program
input X : f32[16, 32]
input W : f32[32, 16]
O = kernel(X, W, grid=[2], forloop=4) {
    x = iter(X, fmap=1)
    w = iter(W, imap=[1], fmap=0)
    m = accum(matmul(x, w))
    save(m * 1e18 * 1e18 * 1e18, omap=[1])
}
output O
