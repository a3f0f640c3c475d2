# GQA split across the KV sequence in two kernels (FlashDecoding), for examples/gqa_b1.mu.
# Kernel 1: grid (2 heads, 8 KV splits); each block walks its 512 keys in 8 steps of 64 and
# accumulates the partial product exp(Q K) V and the partial exp-sum of its split.
# Kernel 2: grid (heads, 4 row blocks of 64 queries) adds the 8 partials and divides:
# O = sum P / sum D.
input Q : f16[2, 256, 64]
input K : f16[2, 64, 4096]
input V : f16[2, 4096, 64]
P, D = kernel(Q, K, V, grid=[2, 8], forloop=8, threads=128) {
    q = iter(Q, imap=[0])
    k = iter(K, imap=[0, 2], fmap=2)
    v = iter(V, imap=[0, 1], fmap=1)
    e = exp(matmul(q, k))
    p = accum(matmul(e, v))
    s = accum(sum(e, dim=2))
    save(reshape(p, shape=[1, 256, 1, 64]), omap=[0, 2])
    save(s, omap=[0, 2])
}
O = kernel(P, D, grid=[2, 4], forloop=1, threads=128) {
    p = iter(P, imap=[0, 1])
    d = iter(D, imap=[0, 1])
    num = reshape(sum(p, dim=2), shape=[1, 64, 64])
    save(accum(num / sum(d, dim=2)), omap=[0, 1])
}
output O
