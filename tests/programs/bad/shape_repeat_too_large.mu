input A : f16[65536, 65536]
C = repeat(A, times=[65536, 1])
output C
