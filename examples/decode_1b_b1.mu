# A LLaMA-style decode step, written by tools/make_decode.py (docs/decode.md):
#   python3 tools/make_decode.py --layers 16 --hidden 2048 --heads 32 --kv-heads 8 --head-dim 64 --ffn 8192 --cache 1024 --batch 1 --dtype f16 --eps 1e-5
# 16 layers, hidden 2048, 32 query heads and 8 KV heads of 64, FFN 8192 (SwiGLU), batch 1,
# KV caches of 1024 positions (inputs), the new token's k and v appended; RMSNorm eps 1e-5; no RoPE; f16;
# the weights' test inputs uniform in +-sqrt(3 / fan-in) (range=), as a model's.
input x : f16[1, 2048]
# layer 0
input l0_g1 : f16[2048]
input l0_wqkv : f16[2048, 3072] range=0.03827
input l0_kc : f16[1, 8, 1024, 64]
input l0_vc : f16[1, 8, 1024, 64]
input l0_wo : f16[2048, 2048] range=0.03827
input l0_g2 : f16[2048]
input l0_w1 : f16[2048, 8192] range=0.03827
input l0_w3 : f16[2048, 8192] range=0.03827
input l0_w2 : f16[8192, 2048] range=0.01914
l0_h = rmsnorm(x, dim=-1, eps=1e-5) * l0_g1
l0_qkv = matmul(l0_h, l0_wqkv)
l0_q = reshape(slice(l0_qkv, dim=1, start=0, len=2048), shape=[1, 8, 4, 64])
l0_k = reshape(slice(l0_qkv, dim=1, start=2048, len=512), shape=[1, 8, 1, 64])
l0_v = reshape(slice(l0_qkv, dim=1, start=2560, len=512), shape=[1, 8, 1, 64])
l0_K = concat(l0_kc, l0_k, dim=2)
l0_V = concat(l0_vc, l0_v, dim=2)
# scores [1, 8, 4, 1025]: batch, kv head, query head of the group, position
l0_s = matmul(l0_q, transpose(l0_K, perm=[0, 1, 3, 2])) * 0.125
l0_e = exp(l0_s - max(l0_s, dim=3))
l0_a = reshape(matmul(l0_e / sum(l0_e, dim=3), l0_V), shape=[1, 2048])
l0_x = x + matmul(l0_a, l0_wo)
l0_h2 = rmsnorm(l0_x, dim=-1, eps=1e-5) * l0_g2
l0_f = silu(matmul(l0_h2, l0_w1)) * matmul(l0_h2, l0_w3)
x1 = l0_x + matmul(l0_f, l0_w2)
# layer 1
input l1_g1 : f16[2048]
input l1_wqkv : f16[2048, 3072] range=0.03827
input l1_kc : f16[1, 8, 1024, 64]
input l1_vc : f16[1, 8, 1024, 64]
input l1_wo : f16[2048, 2048] range=0.03827
input l1_g2 : f16[2048]
input l1_w1 : f16[2048, 8192] range=0.03827
input l1_w3 : f16[2048, 8192] range=0.03827
input l1_w2 : f16[8192, 2048] range=0.01914
l1_h = rmsnorm(x1, dim=-1, eps=1e-5) * l1_g1
l1_qkv = matmul(l1_h, l1_wqkv)
l1_q = reshape(slice(l1_qkv, dim=1, start=0, len=2048), shape=[1, 8, 4, 64])
l1_k = reshape(slice(l1_qkv, dim=1, start=2048, len=512), shape=[1, 8, 1, 64])
l1_v = reshape(slice(l1_qkv, dim=1, start=2560, len=512), shape=[1, 8, 1, 64])
l1_K = concat(l1_kc, l1_k, dim=2)
l1_V = concat(l1_vc, l1_v, dim=2)
# scores [1, 8, 4, 1025]: batch, kv head, query head of the group, position
l1_s = matmul(l1_q, transpose(l1_K, perm=[0, 1, 3, 2])) * 0.125
l1_e = exp(l1_s - max(l1_s, dim=3))
l1_a = reshape(matmul(l1_e / sum(l1_e, dim=3), l1_V), shape=[1, 2048])
l1_x = x1 + matmul(l1_a, l1_wo)
l1_h2 = rmsnorm(l1_x, dim=-1, eps=1e-5) * l1_g2
l1_f = silu(matmul(l1_h2, l1_w1)) * matmul(l1_h2, l1_w3)
x2 = l1_x + matmul(l1_f, l1_w2)
# layer 2
input l2_g1 : f16[2048]
input l2_wqkv : f16[2048, 3072] range=0.03827
input l2_kc : f16[1, 8, 1024, 64]
input l2_vc : f16[1, 8, 1024, 64]
input l2_wo : f16[2048, 2048] range=0.03827
input l2_g2 : f16[2048]
input l2_w1 : f16[2048, 8192] range=0.03827
input l2_w3 : f16[2048, 8192] range=0.03827
input l2_w2 : f16[8192, 2048] range=0.01914
l2_h = rmsnorm(x2, dim=-1, eps=1e-5) * l2_g1
l2_qkv = matmul(l2_h, l2_wqkv)
l2_q = reshape(slice(l2_qkv, dim=1, start=0, len=2048), shape=[1, 8, 4, 64])
l2_k = reshape(slice(l2_qkv, dim=1, start=2048, len=512), shape=[1, 8, 1, 64])
l2_v = reshape(slice(l2_qkv, dim=1, start=2560, len=512), shape=[1, 8, 1, 64])
l2_K = concat(l2_kc, l2_k, dim=2)
l2_V = concat(l2_vc, l2_v, dim=2)
# scores [1, 8, 4, 1025]: batch, kv head, query head of the group, position
l2_s = matmul(l2_q, transpose(l2_K, perm=[0, 1, 3, 2])) * 0.125
l2_e = exp(l2_s - max(l2_s, dim=3))
l2_a = reshape(matmul(l2_e / sum(l2_e, dim=3), l2_V), shape=[1, 2048])
l2_x = x2 + matmul(l2_a, l2_wo)
l2_h2 = rmsnorm(l2_x, dim=-1, eps=1e-5) * l2_g2
l2_f = silu(matmul(l2_h2, l2_w1)) * matmul(l2_h2, l2_w3)
x3 = l2_x + matmul(l2_f, l2_w2)
# layer 3
input l3_g1 : f16[2048]
input l3_wqkv : f16[2048, 3072] range=0.03827
input l3_kc : f16[1, 8, 1024, 64]
input l3_vc : f16[1, 8, 1024, 64]
input l3_wo : f16[2048, 2048] range=0.03827
input l3_g2 : f16[2048]
input l3_w1 : f16[2048, 8192] range=0.03827
input l3_w3 : f16[2048, 8192] range=0.03827
input l3_w2 : f16[8192, 2048] range=0.01914
l3_h = rmsnorm(x3, dim=-1, eps=1e-5) * l3_g1
l3_qkv = matmul(l3_h, l3_wqkv)
l3_q = reshape(slice(l3_qkv, dim=1, start=0, len=2048), shape=[1, 8, 4, 64])
l3_k = reshape(slice(l3_qkv, dim=1, start=2048, len=512), shape=[1, 8, 1, 64])
l3_v = reshape(slice(l3_qkv, dim=1, start=2560, len=512), shape=[1, 8, 1, 64])
l3_K = concat(l3_kc, l3_k, dim=2)
l3_V = concat(l3_vc, l3_v, dim=2)
# scores [1, 8, 4, 1025]: batch, kv head, query head of the group, position
l3_s = matmul(l3_q, transpose(l3_K, perm=[0, 1, 3, 2])) * 0.125
l3_e = exp(l3_s - max(l3_s, dim=3))
l3_a = reshape(matmul(l3_e / sum(l3_e, dim=3), l3_V), shape=[1, 2048])
l3_x = x3 + matmul(l3_a, l3_wo)
l3_h2 = rmsnorm(l3_x, dim=-1, eps=1e-5) * l3_g2
l3_f = silu(matmul(l3_h2, l3_w1)) * matmul(l3_h2, l3_w3)
x4 = l3_x + matmul(l3_f, l3_w2)
# layer 4
input l4_g1 : f16[2048]
input l4_wqkv : f16[2048, 3072] range=0.03827
input l4_kc : f16[1, 8, 1024, 64]
input l4_vc : f16[1, 8, 1024, 64]
input l4_wo : f16[2048, 2048] range=0.03827
input l4_g2 : f16[2048]
input l4_w1 : f16[2048, 8192] range=0.03827
input l4_w3 : f16[2048, 8192] range=0.03827
input l4_w2 : f16[8192, 2048] range=0.01914
l4_h = rmsnorm(x4, dim=-1, eps=1e-5) * l4_g1
l4_qkv = matmul(l4_h, l4_wqkv)
l4_q = reshape(slice(l4_qkv, dim=1, start=0, len=2048), shape=[1, 8, 4, 64])
l4_k = reshape(slice(l4_qkv, dim=1, start=2048, len=512), shape=[1, 8, 1, 64])
l4_v = reshape(slice(l4_qkv, dim=1, start=2560, len=512), shape=[1, 8, 1, 64])
l4_K = concat(l4_kc, l4_k, dim=2)
l4_V = concat(l4_vc, l4_v, dim=2)
# scores [1, 8, 4, 1025]: batch, kv head, query head of the group, position
l4_s = matmul(l4_q, transpose(l4_K, perm=[0, 1, 3, 2])) * 0.125
l4_e = exp(l4_s - max(l4_s, dim=3))
l4_a = reshape(matmul(l4_e / sum(l4_e, dim=3), l4_V), shape=[1, 2048])
l4_x = x4 + matmul(l4_a, l4_wo)
l4_h2 = rmsnorm(l4_x, dim=-1, eps=1e-5) * l4_g2
l4_f = silu(matmul(l4_h2, l4_w1)) * matmul(l4_h2, l4_w3)
x5 = l4_x + matmul(l4_f, l4_w2)
# layer 5
input l5_g1 : f16[2048]
input l5_wqkv : f16[2048, 3072] range=0.03827
input l5_kc : f16[1, 8, 1024, 64]
input l5_vc : f16[1, 8, 1024, 64]
input l5_wo : f16[2048, 2048] range=0.03827
input l5_g2 : f16[2048]
input l5_w1 : f16[2048, 8192] range=0.03827
input l5_w3 : f16[2048, 8192] range=0.03827
input l5_w2 : f16[8192, 2048] range=0.01914
l5_h = rmsnorm(x5, dim=-1, eps=1e-5) * l5_g1
l5_qkv = matmul(l5_h, l5_wqkv)
l5_q = reshape(slice(l5_qkv, dim=1, start=0, len=2048), shape=[1, 8, 4, 64])
l5_k = reshape(slice(l5_qkv, dim=1, start=2048, len=512), shape=[1, 8, 1, 64])
l5_v = reshape(slice(l5_qkv, dim=1, start=2560, len=512), shape=[1, 8, 1, 64])
l5_K = concat(l5_kc, l5_k, dim=2)
l5_V = concat(l5_vc, l5_v, dim=2)
# scores [1, 8, 4, 1025]: batch, kv head, query head of the group, position
l5_s = matmul(l5_q, transpose(l5_K, perm=[0, 1, 3, 2])) * 0.125
l5_e = exp(l5_s - max(l5_s, dim=3))
l5_a = reshape(matmul(l5_e / sum(l5_e, dim=3), l5_V), shape=[1, 2048])
l5_x = x5 + matmul(l5_a, l5_wo)
l5_h2 = rmsnorm(l5_x, dim=-1, eps=1e-5) * l5_g2
l5_f = silu(matmul(l5_h2, l5_w1)) * matmul(l5_h2, l5_w3)
x6 = l5_x + matmul(l5_f, l5_w2)
# layer 6
input l6_g1 : f16[2048]
input l6_wqkv : f16[2048, 3072] range=0.03827
input l6_kc : f16[1, 8, 1024, 64]
input l6_vc : f16[1, 8, 1024, 64]
input l6_wo : f16[2048, 2048] range=0.03827
input l6_g2 : f16[2048]
input l6_w1 : f16[2048, 8192] range=0.03827
input l6_w3 : f16[2048, 8192] range=0.03827
input l6_w2 : f16[8192, 2048] range=0.01914
l6_h = rmsnorm(x6, dim=-1, eps=1e-5) * l6_g1
l6_qkv = matmul(l6_h, l6_wqkv)
l6_q = reshape(slice(l6_qkv, dim=1, start=0, len=2048), shape=[1, 8, 4, 64])
l6_k = reshape(slice(l6_qkv, dim=1, start=2048, len=512), shape=[1, 8, 1, 64])
l6_v = reshape(slice(l6_qkv, dim=1, start=2560, len=512), shape=[1, 8, 1, 64])
l6_K = concat(l6_kc, l6_k, dim=2)
l6_V = concat(l6_vc, l6_v, dim=2)
# scores [1, 8, 4, 1025]: batch, kv head, query head of the group, position
l6_s = matmul(l6_q, transpose(l6_K, perm=[0, 1, 3, 2])) * 0.125
l6_e = exp(l6_s - max(l6_s, dim=3))
l6_a = reshape(matmul(l6_e / sum(l6_e, dim=3), l6_V), shape=[1, 2048])
l6_x = x6 + matmul(l6_a, l6_wo)
l6_h2 = rmsnorm(l6_x, dim=-1, eps=1e-5) * l6_g2
l6_f = silu(matmul(l6_h2, l6_w1)) * matmul(l6_h2, l6_w3)
x7 = l6_x + matmul(l6_f, l6_w2)
# layer 7
input l7_g1 : f16[2048]
input l7_wqkv : f16[2048, 3072] range=0.03827
input l7_kc : f16[1, 8, 1024, 64]
input l7_vc : f16[1, 8, 1024, 64]
input l7_wo : f16[2048, 2048] range=0.03827
input l7_g2 : f16[2048]
input l7_w1 : f16[2048, 8192] range=0.03827
input l7_w3 : f16[2048, 8192] range=0.03827
input l7_w2 : f16[8192, 2048] range=0.01914
l7_h = rmsnorm(x7, dim=-1, eps=1e-5) * l7_g1
l7_qkv = matmul(l7_h, l7_wqkv)
l7_q = reshape(slice(l7_qkv, dim=1, start=0, len=2048), shape=[1, 8, 4, 64])
l7_k = reshape(slice(l7_qkv, dim=1, start=2048, len=512), shape=[1, 8, 1, 64])
l7_v = reshape(slice(l7_qkv, dim=1, start=2560, len=512), shape=[1, 8, 1, 64])
l7_K = concat(l7_kc, l7_k, dim=2)
l7_V = concat(l7_vc, l7_v, dim=2)
# scores [1, 8, 4, 1025]: batch, kv head, query head of the group, position
l7_s = matmul(l7_q, transpose(l7_K, perm=[0, 1, 3, 2])) * 0.125
l7_e = exp(l7_s - max(l7_s, dim=3))
l7_a = reshape(matmul(l7_e / sum(l7_e, dim=3), l7_V), shape=[1, 2048])
l7_x = x7 + matmul(l7_a, l7_wo)
l7_h2 = rmsnorm(l7_x, dim=-1, eps=1e-5) * l7_g2
l7_f = silu(matmul(l7_h2, l7_w1)) * matmul(l7_h2, l7_w3)
x8 = l7_x + matmul(l7_f, l7_w2)
# layer 8
input l8_g1 : f16[2048]
input l8_wqkv : f16[2048, 3072] range=0.03827
input l8_kc : f16[1, 8, 1024, 64]
input l8_vc : f16[1, 8, 1024, 64]
input l8_wo : f16[2048, 2048] range=0.03827
input l8_g2 : f16[2048]
input l8_w1 : f16[2048, 8192] range=0.03827
input l8_w3 : f16[2048, 8192] range=0.03827
input l8_w2 : f16[8192, 2048] range=0.01914
l8_h = rmsnorm(x8, dim=-1, eps=1e-5) * l8_g1
l8_qkv = matmul(l8_h, l8_wqkv)
l8_q = reshape(slice(l8_qkv, dim=1, start=0, len=2048), shape=[1, 8, 4, 64])
l8_k = reshape(slice(l8_qkv, dim=1, start=2048, len=512), shape=[1, 8, 1, 64])
l8_v = reshape(slice(l8_qkv, dim=1, start=2560, len=512), shape=[1, 8, 1, 64])
l8_K = concat(l8_kc, l8_k, dim=2)
l8_V = concat(l8_vc, l8_v, dim=2)
# scores [1, 8, 4, 1025]: batch, kv head, query head of the group, position
l8_s = matmul(l8_q, transpose(l8_K, perm=[0, 1, 3, 2])) * 0.125
l8_e = exp(l8_s - max(l8_s, dim=3))
l8_a = reshape(matmul(l8_e / sum(l8_e, dim=3), l8_V), shape=[1, 2048])
l8_x = x8 + matmul(l8_a, l8_wo)
l8_h2 = rmsnorm(l8_x, dim=-1, eps=1e-5) * l8_g2
l8_f = silu(matmul(l8_h2, l8_w1)) * matmul(l8_h2, l8_w3)
x9 = l8_x + matmul(l8_f, l8_w2)
# layer 9
input l9_g1 : f16[2048]
input l9_wqkv : f16[2048, 3072] range=0.03827
input l9_kc : f16[1, 8, 1024, 64]
input l9_vc : f16[1, 8, 1024, 64]
input l9_wo : f16[2048, 2048] range=0.03827
input l9_g2 : f16[2048]
input l9_w1 : f16[2048, 8192] range=0.03827
input l9_w3 : f16[2048, 8192] range=0.03827
input l9_w2 : f16[8192, 2048] range=0.01914
l9_h = rmsnorm(x9, dim=-1, eps=1e-5) * l9_g1
l9_qkv = matmul(l9_h, l9_wqkv)
l9_q = reshape(slice(l9_qkv, dim=1, start=0, len=2048), shape=[1, 8, 4, 64])
l9_k = reshape(slice(l9_qkv, dim=1, start=2048, len=512), shape=[1, 8, 1, 64])
l9_v = reshape(slice(l9_qkv, dim=1, start=2560, len=512), shape=[1, 8, 1, 64])
l9_K = concat(l9_kc, l9_k, dim=2)
l9_V = concat(l9_vc, l9_v, dim=2)
# scores [1, 8, 4, 1025]: batch, kv head, query head of the group, position
l9_s = matmul(l9_q, transpose(l9_K, perm=[0, 1, 3, 2])) * 0.125
l9_e = exp(l9_s - max(l9_s, dim=3))
l9_a = reshape(matmul(l9_e / sum(l9_e, dim=3), l9_V), shape=[1, 2048])
l9_x = x9 + matmul(l9_a, l9_wo)
l9_h2 = rmsnorm(l9_x, dim=-1, eps=1e-5) * l9_g2
l9_f = silu(matmul(l9_h2, l9_w1)) * matmul(l9_h2, l9_w3)
x10 = l9_x + matmul(l9_f, l9_w2)
# layer 10
input l10_g1 : f16[2048]
input l10_wqkv : f16[2048, 3072] range=0.03827
input l10_kc : f16[1, 8, 1024, 64]
input l10_vc : f16[1, 8, 1024, 64]
input l10_wo : f16[2048, 2048] range=0.03827
input l10_g2 : f16[2048]
input l10_w1 : f16[2048, 8192] range=0.03827
input l10_w3 : f16[2048, 8192] range=0.03827
input l10_w2 : f16[8192, 2048] range=0.01914
l10_h = rmsnorm(x10, dim=-1, eps=1e-5) * l10_g1
l10_qkv = matmul(l10_h, l10_wqkv)
l10_q = reshape(slice(l10_qkv, dim=1, start=0, len=2048), shape=[1, 8, 4, 64])
l10_k = reshape(slice(l10_qkv, dim=1, start=2048, len=512), shape=[1, 8, 1, 64])
l10_v = reshape(slice(l10_qkv, dim=1, start=2560, len=512), shape=[1, 8, 1, 64])
l10_K = concat(l10_kc, l10_k, dim=2)
l10_V = concat(l10_vc, l10_v, dim=2)
# scores [1, 8, 4, 1025]: batch, kv head, query head of the group, position
l10_s = matmul(l10_q, transpose(l10_K, perm=[0, 1, 3, 2])) * 0.125
l10_e = exp(l10_s - max(l10_s, dim=3))
l10_a = reshape(matmul(l10_e / sum(l10_e, dim=3), l10_V), shape=[1, 2048])
l10_x = x10 + matmul(l10_a, l10_wo)
l10_h2 = rmsnorm(l10_x, dim=-1, eps=1e-5) * l10_g2
l10_f = silu(matmul(l10_h2, l10_w1)) * matmul(l10_h2, l10_w3)
x11 = l10_x + matmul(l10_f, l10_w2)
# layer 11
input l11_g1 : f16[2048]
input l11_wqkv : f16[2048, 3072] range=0.03827
input l11_kc : f16[1, 8, 1024, 64]
input l11_vc : f16[1, 8, 1024, 64]
input l11_wo : f16[2048, 2048] range=0.03827
input l11_g2 : f16[2048]
input l11_w1 : f16[2048, 8192] range=0.03827
input l11_w3 : f16[2048, 8192] range=0.03827
input l11_w2 : f16[8192, 2048] range=0.01914
l11_h = rmsnorm(x11, dim=-1, eps=1e-5) * l11_g1
l11_qkv = matmul(l11_h, l11_wqkv)
l11_q = reshape(slice(l11_qkv, dim=1, start=0, len=2048), shape=[1, 8, 4, 64])
l11_k = reshape(slice(l11_qkv, dim=1, start=2048, len=512), shape=[1, 8, 1, 64])
l11_v = reshape(slice(l11_qkv, dim=1, start=2560, len=512), shape=[1, 8, 1, 64])
l11_K = concat(l11_kc, l11_k, dim=2)
l11_V = concat(l11_vc, l11_v, dim=2)
# scores [1, 8, 4, 1025]: batch, kv head, query head of the group, position
l11_s = matmul(l11_q, transpose(l11_K, perm=[0, 1, 3, 2])) * 0.125
l11_e = exp(l11_s - max(l11_s, dim=3))
l11_a = reshape(matmul(l11_e / sum(l11_e, dim=3), l11_V), shape=[1, 2048])
l11_x = x11 + matmul(l11_a, l11_wo)
l11_h2 = rmsnorm(l11_x, dim=-1, eps=1e-5) * l11_g2
l11_f = silu(matmul(l11_h2, l11_w1)) * matmul(l11_h2, l11_w3)
x12 = l11_x + matmul(l11_f, l11_w2)
# layer 12
input l12_g1 : f16[2048]
input l12_wqkv : f16[2048, 3072] range=0.03827
input l12_kc : f16[1, 8, 1024, 64]
input l12_vc : f16[1, 8, 1024, 64]
input l12_wo : f16[2048, 2048] range=0.03827
input l12_g2 : f16[2048]
input l12_w1 : f16[2048, 8192] range=0.03827
input l12_w3 : f16[2048, 8192] range=0.03827
input l12_w2 : f16[8192, 2048] range=0.01914
l12_h = rmsnorm(x12, dim=-1, eps=1e-5) * l12_g1
l12_qkv = matmul(l12_h, l12_wqkv)
l12_q = reshape(slice(l12_qkv, dim=1, start=0, len=2048), shape=[1, 8, 4, 64])
l12_k = reshape(slice(l12_qkv, dim=1, start=2048, len=512), shape=[1, 8, 1, 64])
l12_v = reshape(slice(l12_qkv, dim=1, start=2560, len=512), shape=[1, 8, 1, 64])
l12_K = concat(l12_kc, l12_k, dim=2)
l12_V = concat(l12_vc, l12_v, dim=2)
# scores [1, 8, 4, 1025]: batch, kv head, query head of the group, position
l12_s = matmul(l12_q, transpose(l12_K, perm=[0, 1, 3, 2])) * 0.125
l12_e = exp(l12_s - max(l12_s, dim=3))
l12_a = reshape(matmul(l12_e / sum(l12_e, dim=3), l12_V), shape=[1, 2048])
l12_x = x12 + matmul(l12_a, l12_wo)
l12_h2 = rmsnorm(l12_x, dim=-1, eps=1e-5) * l12_g2
l12_f = silu(matmul(l12_h2, l12_w1)) * matmul(l12_h2, l12_w3)
x13 = l12_x + matmul(l12_f, l12_w2)
# layer 13
input l13_g1 : f16[2048]
input l13_wqkv : f16[2048, 3072] range=0.03827
input l13_kc : f16[1, 8, 1024, 64]
input l13_vc : f16[1, 8, 1024, 64]
input l13_wo : f16[2048, 2048] range=0.03827
input l13_g2 : f16[2048]
input l13_w1 : f16[2048, 8192] range=0.03827
input l13_w3 : f16[2048, 8192] range=0.03827
input l13_w2 : f16[8192, 2048] range=0.01914
l13_h = rmsnorm(x13, dim=-1, eps=1e-5) * l13_g1
l13_qkv = matmul(l13_h, l13_wqkv)
l13_q = reshape(slice(l13_qkv, dim=1, start=0, len=2048), shape=[1, 8, 4, 64])
l13_k = reshape(slice(l13_qkv, dim=1, start=2048, len=512), shape=[1, 8, 1, 64])
l13_v = reshape(slice(l13_qkv, dim=1, start=2560, len=512), shape=[1, 8, 1, 64])
l13_K = concat(l13_kc, l13_k, dim=2)
l13_V = concat(l13_vc, l13_v, dim=2)
# scores [1, 8, 4, 1025]: batch, kv head, query head of the group, position
l13_s = matmul(l13_q, transpose(l13_K, perm=[0, 1, 3, 2])) * 0.125
l13_e = exp(l13_s - max(l13_s, dim=3))
l13_a = reshape(matmul(l13_e / sum(l13_e, dim=3), l13_V), shape=[1, 2048])
l13_x = x13 + matmul(l13_a, l13_wo)
l13_h2 = rmsnorm(l13_x, dim=-1, eps=1e-5) * l13_g2
l13_f = silu(matmul(l13_h2, l13_w1)) * matmul(l13_h2, l13_w3)
x14 = l13_x + matmul(l13_f, l13_w2)
# layer 14
input l14_g1 : f16[2048]
input l14_wqkv : f16[2048, 3072] range=0.03827
input l14_kc : f16[1, 8, 1024, 64]
input l14_vc : f16[1, 8, 1024, 64]
input l14_wo : f16[2048, 2048] range=0.03827
input l14_g2 : f16[2048]
input l14_w1 : f16[2048, 8192] range=0.03827
input l14_w3 : f16[2048, 8192] range=0.03827
input l14_w2 : f16[8192, 2048] range=0.01914
l14_h = rmsnorm(x14, dim=-1, eps=1e-5) * l14_g1
l14_qkv = matmul(l14_h, l14_wqkv)
l14_q = reshape(slice(l14_qkv, dim=1, start=0, len=2048), shape=[1, 8, 4, 64])
l14_k = reshape(slice(l14_qkv, dim=1, start=2048, len=512), shape=[1, 8, 1, 64])
l14_v = reshape(slice(l14_qkv, dim=1, start=2560, len=512), shape=[1, 8, 1, 64])
l14_K = concat(l14_kc, l14_k, dim=2)
l14_V = concat(l14_vc, l14_v, dim=2)
# scores [1, 8, 4, 1025]: batch, kv head, query head of the group, position
l14_s = matmul(l14_q, transpose(l14_K, perm=[0, 1, 3, 2])) * 0.125
l14_e = exp(l14_s - max(l14_s, dim=3))
l14_a = reshape(matmul(l14_e / sum(l14_e, dim=3), l14_V), shape=[1, 2048])
l14_x = x14 + matmul(l14_a, l14_wo)
l14_h2 = rmsnorm(l14_x, dim=-1, eps=1e-5) * l14_g2
l14_f = silu(matmul(l14_h2, l14_w1)) * matmul(l14_h2, l14_w3)
x15 = l14_x + matmul(l14_f, l14_w2)
# layer 15
input l15_g1 : f16[2048]
input l15_wqkv : f16[2048, 3072] range=0.03827
input l15_kc : f16[1, 8, 1024, 64]
input l15_vc : f16[1, 8, 1024, 64]
input l15_wo : f16[2048, 2048] range=0.03827
input l15_g2 : f16[2048]
input l15_w1 : f16[2048, 8192] range=0.03827
input l15_w3 : f16[2048, 8192] range=0.03827
input l15_w2 : f16[8192, 2048] range=0.01914
l15_h = rmsnorm(x15, dim=-1, eps=1e-5) * l15_g1
l15_qkv = matmul(l15_h, l15_wqkv)
l15_q = reshape(slice(l15_qkv, dim=1, start=0, len=2048), shape=[1, 8, 4, 64])
l15_k = reshape(slice(l15_qkv, dim=1, start=2048, len=512), shape=[1, 8, 1, 64])
l15_v = reshape(slice(l15_qkv, dim=1, start=2560, len=512), shape=[1, 8, 1, 64])
l15_K = concat(l15_kc, l15_k, dim=2)
l15_V = concat(l15_vc, l15_v, dim=2)
# scores [1, 8, 4, 1025]: batch, kv head, query head of the group, position
l15_s = matmul(l15_q, transpose(l15_K, perm=[0, 1, 3, 2])) * 0.125
l15_e = exp(l15_s - max(l15_s, dim=3))
l15_a = reshape(matmul(l15_e / sum(l15_e, dim=3), l15_V), shape=[1, 2048])
l15_x = x15 + matmul(l15_a, l15_wo)
l15_h2 = rmsnorm(l15_x, dim=-1, eps=1e-5) * l15_g2
l15_f = silu(matmul(l15_h2, l15_w1)) * matmul(l15_h2, l15_w3)
y = l15_x + matmul(l15_f, l15_w2)
output y, l0_k, l0_v, l1_k, l1_v, l2_k, l2_v, l3_k, l3_v, l4_k, l4_v, l5_k, l5_v, l6_k, l6_v, l7_k, l7_v, l8_k, l8_v, l9_k, l9_v, l10_k, l10_v, l11_k, l11_v, l12_k, l12_v, l13_k, l13_v, l14_k, l14_v, l15_k, l15_v
