# Low-rank adaptation (GPT-3-7B-LoRA), Mirage benchmark LoRA: O = X W + (X A) B.
input X : f16[16, 256]
input W : f16[256, 4096]
input A : f16[256, 16]
input B : f16[16, 4096]
O = matmul(X, W) + matmul(matmul(X, A), B)
output O
