# Batched matmul, the left operand broadcast over the batch, transposed by a reshape-free
# layout: [3, 2, 24, 40] x [2, 40, 56] (two batch dims, one broadcast).
input A : f32[3, 2, 24, 40]
input B : bf16[1, 2, 40, 56]
O = matmul(A, B) * 0.5
output O
