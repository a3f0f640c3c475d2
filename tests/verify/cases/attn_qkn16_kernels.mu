# program: tests/verify/programs/qkn16.mu
# expect: 0
# class: attention
# why: QKNorm: normalised scores in 2x2 blocks, then exp, numerator and denominator over 2 iterations
input Q : f32[2, 8, 16]
input K : f32[2, 16, 32]
input V : f32[2, 32, 16]
A = kernel(Q, K, grid=[2, 2]) {
    q = iter(Q, imap=[0])
    k = iter(K, imap=[0, 2])
    kn = k / sqrt(sum(sqr(k), dim=1) / 16)
    s = matmul(q, kn) / sqrt(sum(sqr(q), dim=2) / 16)
    save(accum(s / 4), omap=[0, 2])
}
O = kernel(A, V, grid=[2], forloop=2) {
    a = iter(A, imap=[0], fmap=2)
    v = iter(V, imap=[0], fmap=1)
    e = exp(a)
    n = accum(matmul(e, v))
    d = accum(sum(e, dim=2))
    save(n / d, omap=[0])
}
output O
