dim B [1, 64]
input x : f16[B, 256]
input w : f16[32, 64]
r = reshape(x, shape=[B*8, 32])
m = matmul(r, w)
q = reshape(m, shape=[B, 512])
s = sum(q, dim=1)
t = q / s
output t
