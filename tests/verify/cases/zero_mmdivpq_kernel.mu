# program: tests/verify/programs/mmdivpq.mu
# expect: 0
# class: fieldzero
# why: matmul then divide by 9.223371137059149241 (0 mod p and q) inside a kernel
input X : f32[16, 32]
input W : f32[32, 16]
O = kernel(X, W, grid=[2], forloop=4) {
    x = iter(X, fmap=1)
    w = iter(W, imap=[1], fmap=0)
    m = accum(matmul(x, w))
    save(m / 9.223371137059149241, omap=[1])
}
output O
