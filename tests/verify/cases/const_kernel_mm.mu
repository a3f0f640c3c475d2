# program: tests/verify/programs/mm.mu
# expect: 3
# class: const
# why: c = -8.223371137059149241 = 1 mod p, q inside a kernel's block graph (per iteration)
input X : f32[16, 32]
input W : f32[32, 16]
O = kernel(X, W, grid=[2], forloop=4) {
    x = iter(X, fmap=1)
    w = iter(W, imap=[1], fmap=0)
    save(accum(matmul(x, w) * -8.223371137059149241), omap=[1])
}
output O
