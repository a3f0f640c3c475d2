input X : f32[2, 4, 6]
input Y : f32[2, 6, 3]
input Z : f32[6]
a = add(X, Z)
b = sub(X, Z)
c = mul(a, b)
d = div(c, 1.5)
e = exp(d) + sqr(d) - sqrt(sqr(d))
f = silu(e) * relu(e)
g = matmul(f, Y)
h = sum(g, dim=2)
i = sum(f, dim=-1, group=3)
j = max(g, dim=1)
k = repeat(j, times=[1, 4, 1])
l = reshape(k, shape=[8, 3])
m = concat(g, g, dim=-2)
n = rmsnorm(g, dim=-1)
o = mean(g, dim=0)
p = -g + (-1) * -h - -0.25
q = g - 1e-3 + 2E2 + .5
r = transpose(slice(g, dim=1, start=1, len=2), perm=[2, 0, 1])
s = rsqrt(rmsnorm(sqr(g) + 1, dim=-1, eps=1e-6))
output h, i, l, m, n, o, p, q, r, s
