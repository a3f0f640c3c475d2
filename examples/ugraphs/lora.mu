# LoRA as one kernel using concat, for examples/lora.mu: O = X W + (X A) B.
# X W + (X A) B = [X | X A] [W ; B]: each of 64 blocks computes the small X A (16 x 16) itself,
# concatenates it to X and B below its 64 columns of W, and does one matmul of depth 272.
input X : f16[16, 256]
input W : f16[256, 4096]
input A : f16[256, 16]
input B : f16[16, 4096]
O = kernel(X, W, A, B, grid=[64], forloop=1, threads=128) {
    x = iter(X)
    w = iter(W, imap=[1])
    a = iter(A)
    b = iter(B, imap=[1])
    z = concat(x, matmul(x, a), dim=1)
    v = concat(w, b, dim=0)
    save(accum(matmul(z, v)), omap=[1])
}
output O
