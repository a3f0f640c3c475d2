input X : f32[4, 16]
input A : f32[4, 16]
input B : f32[16, 16]
O = concat(X, matmul(A, B) * 100000, dim=0)
output O
