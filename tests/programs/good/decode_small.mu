# A LLaMA-style decode step, written by tools/make_decode.py (docs/decode.md):
#   python3 tools/make_decode.py --layers 2 --hidden 64 --heads 4 --kv-heads 2 --head-dim 16 --ffn 128 --cache 16 --batch 2 --dtype f16 --eps 1e-5
# 2 layers, hidden 64, 4 query heads and 2 KV heads of 16, FFN 128 (SwiGLU), batch 2,
# KV caches of 16 positions (inputs), the new token's k and v appended; RMSNorm eps 1e-5; no RoPE; f16;
# the weights' test inputs uniform in +-sqrt(3 / fan-in) (range=), as a model's.
input x : f16[2, 64]
# layer 0
input l0_g1 : f16[64]
input l0_wqkv : f16[64, 128] range=0.2165
input l0_kc : f16[2, 2, 16, 16]
input l0_vc : f16[2, 2, 16, 16]
input l0_wo : f16[64, 64] range=0.2165
input l0_g2 : f16[64]
input l0_w1 : f16[64, 128] range=0.2165
input l0_w3 : f16[64, 128] range=0.2165
input l0_w2 : f16[128, 64] range=0.1531
l0_h = rmsnorm(x, dim=-1, eps=1e-5) * l0_g1
l0_qkv = matmul(l0_h, l0_wqkv)
l0_q = reshape(slice(l0_qkv, dim=1, start=0, len=64), shape=[2, 2, 2, 16])
l0_k = reshape(slice(l0_qkv, dim=1, start=64, len=32), shape=[2, 2, 1, 16])
l0_v = reshape(slice(l0_qkv, dim=1, start=96, len=32), shape=[2, 2, 1, 16])
l0_K = concat(l0_kc, l0_k, dim=2)
l0_V = concat(l0_vc, l0_v, dim=2)
# scores [2, 2, 2, 17]: batch, kv head, query head of the group, position
l0_s = matmul(l0_q, transpose(l0_K, perm=[0, 1, 3, 2])) * 0.25
l0_e = exp(l0_s - max(l0_s, dim=3))
l0_a = reshape(matmul(l0_e / sum(l0_e, dim=3), l0_V), shape=[2, 64])
l0_x = x + matmul(l0_a, l0_wo)
l0_h2 = rmsnorm(l0_x, dim=-1, eps=1e-5) * l0_g2
l0_f = silu(matmul(l0_h2, l0_w1)) * matmul(l0_h2, l0_w3)
x1 = l0_x + matmul(l0_f, l0_w2)
# layer 1
input l1_g1 : f16[64]
input l1_wqkv : f16[64, 128] range=0.2165
input l1_kc : f16[2, 2, 16, 16]
input l1_vc : f16[2, 2, 16, 16]
input l1_wo : f16[64, 64] range=0.2165
input l1_g2 : f16[64]
input l1_w1 : f16[64, 128] range=0.2165
input l1_w3 : f16[64, 128] range=0.2165
input l1_w2 : f16[128, 64] range=0.1531
l1_h = rmsnorm(x1, dim=-1, eps=1e-5) * l1_g1
l1_qkv = matmul(l1_h, l1_wqkv)
l1_q = reshape(slice(l1_qkv, dim=1, start=0, len=64), shape=[2, 2, 2, 16])
l1_k = reshape(slice(l1_qkv, dim=1, start=64, len=32), shape=[2, 2, 1, 16])
l1_v = reshape(slice(l1_qkv, dim=1, start=96, len=32), shape=[2, 2, 1, 16])
l1_K = concat(l1_kc, l1_k, dim=2)
l1_V = concat(l1_vc, l1_v, dim=2)
# scores [2, 2, 2, 17]: batch, kv head, query head of the group, position
l1_s = matmul(l1_q, transpose(l1_K, perm=[0, 1, 3, 2])) * 0.25
l1_e = exp(l1_s - max(l1_s, dim=3))
l1_a = reshape(matmul(l1_e / sum(l1_e, dim=3), l1_V), shape=[2, 64])
l1_x = x1 + matmul(l1_a, l1_wo)
l1_h2 = rmsnorm(l1_x, dim=-1, eps=1e-5) * l1_g2
l1_f = silu(matmul(l1_h2, l1_w1)) * matmul(l1_h2, l1_w3)
y = l1_x + matmul(l1_f, l1_w2)
output y, l0_k, l0_v, l1_k, l1_v
