input A : f16[2, 3]
C = reshape(A, shape=[1, 1, 1, 2, 3])
output C
