# Batched matmul, scaled, plus a third tensor: 32 batches of 256 x 128 x 256.
input A : f16[32, 256, 128]
input B : f16[32, 128, 256]
input C : f16[32, 256, 256]
O = matmul(A, B) * 0.0625 + C
output O
