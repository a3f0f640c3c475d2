# outputs over the length itself: scores and their exp, compared on the first L columns
dim L [128, 512]
input q : f16[16, 64]
input k : f16[64, L]
s = matmul(q, k)
e = exp(s - 1)
t = sum(e * s, dim=1)
output e
output t
