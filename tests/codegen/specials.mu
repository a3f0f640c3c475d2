# Every operator on NaN, +inf, -inf, -0 and +0 (mugen run --specials: every third input element
# one of them): the generated code must give the reference's NaN, infinities and signed zeros
# (tests/codegen/run.sh on the C backend, make test-gpu on the GPU).
input X : f32[4, 15]
input Y : f32[4, 15]
input H : f16[4, 15]
input W : f32[15, 6]
e = exp(X)
s = sqr(X)
r = sqrt(X)
u = silu(X)
l = relu(X)
a = add(X, Y)
b = sub(X, Y)
m = mul(X, Y)
d = div(X, Y)
h = relu(H) * H
g = matmul(X, W)
t = sum(X, dim=1)
x = max(X, dim=1)
c = concat(X, Y, dim=1)
p = reshape(repeat(H, times=[2, 1]), shape=[15, 8])
output e, s, r, u, l, a, b, m, d, h, g, t, x, c, p
