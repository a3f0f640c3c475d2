# CORA's transformer encoder layer (cora.txt §7), written by tools/make_encoder.py (docs/ragged.md):
#   python3 tools/make_encoder.py --batch 32 --max 512 --hidden 512 --heads 8 --ffn 2048 --dtype f16 --part ffn
# Its token-wise half: FFN 2048 (ReLU), residual, LayerNorm over 32 sequences of run-time
# lengths (at most 512), hidden 512: no operator mixes tokens (docs/ragged.md, token form).
lengths len[32] max=512
input x : f16[32, len, 512]
input b2 : f16[512]
input g2 : f16[512]
input be2 : f16[512]
input w1 : f16[1, 512, 2048] range=0.07655
input b1 : f16[2048]
input w2 : f16[1, 2048, 512] range=0.03827
f = relu(matmul(x, w1) + b1)
h2 = x + matmul(f, w2) + b2
y_m = h2 - mean(h2, dim=-1)
y = y_m * rsqrt(mean(y_m * y_m, dim=-1) + 1e-5) * g2 + be2
output y
