# Form MMROW (docs/lower.md): a LayerNorm of x + A W + b over the product's rows, lowered for
# the GPU as one kernel of 64 x 256 tiles (68 blocks: at least half an H100's SMs), the
# product's f32 result never stored; the C target lowers it as two kernels.
input x : f16[4352, 256]
input a : f16[4352, 128]
input w : f16[128, 256] range=0.1
input b : f16[256]
input g : f16[256]
input be : f16[256]
h = x + matmul(a, w) + b
hm = h - mean(h, dim=-1)
y = hm * rsqrt(mean(hm * hm, dim=-1) + 1e-5) * g + be
output y
