# program: tests/verify/programs/gated.mu
# expect: 3
# class: label
# why: gated MLP times c = -8.223371137059149241 (1 mod p, q) after the accumulators
input X : f32[4, 32]
input W1 : f32[32, 32]
input W2 : f32[32, 32]
O = kernel(X, W1, W2, grid=[2], forloop=2) {
    x = iter(X, fmap=1)
    a = iter(W1, imap=[1], fmap=0)
    b = iter(W2, imap=[1], fmap=0)
    p = accum(matmul(x, a))
    q = accum(matmul(x, b))
    save(silu(p) * q * -8.223371137059149241, omap=[1])
}
output O
