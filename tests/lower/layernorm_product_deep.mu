# Form MMROW's depth limit (docs/lower.md): the same LayerNorm after a product 1024 deep (16
# steps of 64, past LW_ROW_ITERS) lowers on the GPU as two kernels, the product on 128-row tiles
# and the LayerNorm a ROW kernel, as on the C target.
input x : f16[4352, 256]
input a : f16[4352, 1024]
input w : f16[1024, 256] range=0.04
input b : f16[256]
input g : f16[256]
input be : f16[256]
h = x + matmul(a, w) + b
hm = h - mean(h, dim=-1)
y = hm * rsqrt(mean(hm * hm, dim=-1) + 1e-5) * g + be
output y
