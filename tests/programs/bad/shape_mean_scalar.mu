input A : f16[]
C = mean(A, dim=0)
output C
