# program: tests/verify/programs/attn.mu
# expect: 3
# class: attention
# why: split softmax combined by adding the per-split results (no re-weighting, no division)
input Q : f32[2, 8, 4]
input K : f32[2, 4, 32]
input V : f32[2, 32, 4]
P, D = kernel(Q, K, V, grid=[2, 4], forloop=2) {
    q = iter(Q, imap=[0])
    k = iter(K, imap=[0, 2], fmap=2)
    v = iter(V, imap=[0, 1], fmap=1)
    e = exp(matmul(q, k))
    p = accum(matmul(e, v))
    s = accum(sum(e, dim=2))
    save(reshape(p / s, shape=[1, 8, 1, 4]), omap=[0, 2])
    save(s, omap=[0, 2])
}
O = kernel(P, D, grid=[2], forloop=1) {
    p = iter(P, imap=[0])
    d = iter(D, imap=[0])
    save(accum(reshape(sum(p, dim=2), shape=[1, 8, 4])), omap=[0])
}
output O
