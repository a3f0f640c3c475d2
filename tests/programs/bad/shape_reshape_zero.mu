input A : f16[2, 3]
C = reshape(A, shape=[0, 6])
output C
