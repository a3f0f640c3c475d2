# Two matmuls of one output in one kernel (silu(X A) * (X B)), few output tiles and a deep
# reduction: split along the depth, the epilogue after the partial products are added.
input X : f16[4, 4096]
input A : f16[4096, 64]
input B : f16[4096, 64]
O = silu(matmul(X, A)) * matmul(X, B)
output O
