# LoRA on a fused QKV projection, rank 16, scaled by alpha / r = 2; 4 tokens (2048 -> 6144).
input X : f16[4, 2048]
input W : f16[2048, 6144]
input A : f16[2048, 16]
input B : f16[16, 6144]
O = matmul(X, W) + matmul(matmul(X, A), B) * 2
output O
