# program: tests/verify/programs/gated.mu
# expect: 3
# class: layout
# why: gated MLP with silu inside the loop: silu of each partial product summed
input X : f32[4, 32]
input W1 : f32[32, 32]
input W2 : f32[32, 32]
O = kernel(X, W1, W2, grid=[2], forloop=2) {
    x = iter(X, fmap=1)
    a = iter(W1, imap=[1], fmap=0)
    b = iter(W2, imap=[1], fmap=0)
    p = accum(silu(matmul(x, a)))
    q = accum(matmul(x, b))
    save(p * q, omap=[1])
}
output O
