input A : f16[2, 3]
C = reshape(A, shape=[])
output C
