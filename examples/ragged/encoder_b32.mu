# CORA's transformer encoder layer (cora.txt §7), written by tools/make_encoder.py (docs/ragged.md):
#   python3 tools/make_encoder.py --batch 32 --max 512 --hidden 512 --heads 8 --ffn 2048 --dtype f16
# 32 sequences of run-time lengths (at most 512), hidden 512, 8 heads of 64, FFN 2048 (ReLU),
# post-LayerNorm, biases. Each sequence attends to its own keys only: no mask, no padding.
lengths len[32] max=512
input x : f16[32, len, 512]
input wq : f16[1, 512, 512] range=0.07655
input wk : f16[1, 512, 512] range=0.07655
input wv : f16[1, 512, 512] range=0.07655
input wo : f16[1, 512, 512] range=0.07655
input bq : f16[512]
input bk : f16[512]
input bv : f16[512]
input bo : f16[512]
input b2 : f16[512]
input g1 : f16[512]
input be1 : f16[512]
input g2 : f16[512]
input be2 : f16[512]
input w1 : f16[1, 512, 2048] range=0.07655
input b1 : f16[2048]
input w2 : f16[1, 2048, 512] range=0.03827
q = transpose(reshape(matmul(x, wq) + bq, shape=[32, len, 8, 64]), perm=[0, 2, 1, 3])
k = transpose(reshape(matmul(x, wk) + bk, shape=[32, len, 8, 64]), perm=[0, 2, 1, 3])
v = transpose(reshape(matmul(x, wv) + bv, shape=[32, len, 8, 64]), perm=[0, 2, 1, 3])
# scores [32, 8, len, len]: each sequence's queries against its own keys
s = matmul(q, transpose(k, perm=[0, 1, 3, 2])) * 0.125
e = exp(s - max(s, dim=-1))
a = reshape(transpose(matmul(e / sum(e, dim=-1), v), perm=[0, 2, 1, 3]), shape=[32, len, 512])
h1 = x + matmul(a, wo) + bo
y1_m = h1 - mean(h1, dim=-1)
y1 = y1_m * rsqrt(mean(y1_m * y1_m, dim=-1) + 1e-5) * g1 + be1
f = relu(matmul(y1, w1) + b1)
h2 = y1 + matmul(f, w2) + b2
y_m = h2 - mean(h2, dim=-1)
y = y_m * rsqrt(mean(y_m * y_m, dim=-1) + 1e-5) * g2 + be2
output y
