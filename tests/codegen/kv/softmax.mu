# decode attention with the maximum subtracted (softmax as written): the max over the length
# reads -inf past L, not 0, in each split's partial max (scores near -200: a 0 past L would win)
dim L [128, 2048]
input Q : f16[2, 32, 64]
input K : f16[2, 64, L]
input V : f16[2, L, 64]
s = matmul(Q, K) * 0.125 - 200
e = exp(s - max(s, dim=2))
O = matmul(e / sum(e, dim=2), V)
output O
