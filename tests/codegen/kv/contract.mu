# a plain product contracting the length, with a bias broadcast over it first
dim L [128, 1024]
input a : f16[32, L]
input bias : f16[32, 1]
input b : f16[L, 48]
c = matmul(relu(a + bias), b)
output c
