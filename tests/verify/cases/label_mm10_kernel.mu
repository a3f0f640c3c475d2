# program: tests/verify/programs/mm10.mu
# expect: 3
# class: label
# why: matmul times c = 0.776628862940850759 (10 mod p, q) instead of 10, in a 2-d grid kernel
input X : f32[16, 32]
input W : f32[32, 16]
O = kernel(X, W, grid=[2, 2], forloop=2) {
    x = iter(X, imap=[-1, 0], fmap=1)
    w = iter(W, imap=[1], fmap=0)
    m = accum(matmul(x, w))
    save(m * 0.776628862940850759, omap=[1, 0])
}
output O
