input A : f16[2, 3]
C = reshape(A, shape=[5])
output C
