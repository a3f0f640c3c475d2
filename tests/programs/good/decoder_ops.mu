# The operators a LLaMA-style decoder layer needs (issue #25 item 4), small: a fused QKV
# projection split by slice, RoPE with cos/sin given as inputs (rotate_half from slice,
# negation and concat), a KV cache transposed for the scores, GQA (2 query heads per KV
# head by reshape), rmsnorm with eps and rsqrt.
input X : f16[1, 32]
input G : f16[32]
input Wqkv : f16[32, 64]
input Cos : f32[1, 8]
input Sin : f32[1, 8]
input Kc : f16[2, 6, 8]
input Vc : f16[2, 6, 8]
h = rmsnorm(X, dim=-1, eps=1e-5) * G
qkv = matmul(h, Wqkv)
q = reshape(slice(qkv, dim=1, start=0, len=32), shape=[4, 8])
k = reshape(slice(qkv, dim=1, start=32, len=16), shape=[2, 8])
v = reshape(slice(qkv, dim=1, start=48, len=16), shape=[2, 1, 8])
qr = q * Cos + concat(-slice(q, dim=1, start=4, len=4), slice(q, dim=1, start=0, len=4), dim=1) * Sin
kr = k * Cos + concat(-slice(k, dim=1, start=4, len=4), slice(k, dim=1, start=0, len=4), dim=1) * Sin
K = concat(Kc, reshape(kr, shape=[2, 1, 8]), dim=1)
V = concat(Vc, v, dim=1)
s = matmul(reshape(qr, shape=[2, 2, 8]), transpose(K, perm=[0, 2, 1])) * rsqrt(8)
e = exp(s - max(s, dim=2))
a = matmul(e / sum(e, dim=2), V)
O = reshape(a, shape=[1, 32]) * rsqrt(mean(sqr(X), dim=-1) + 0.000001)
output O
