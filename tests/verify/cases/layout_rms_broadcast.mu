# program: tests/verify/programs/rmsq.mu
# expect: 3
# class: layout
# why: RMSNorm whose per-row norm is reshaped to a row vector: broadcast along the wrong axis
input X : f32[16, 16]
O = kernel(X, grid=[1]) {
    x = iter(X)
    r = sqrt(sum(sqr(x), dim=1) / 16)
    save(accum(x / reshape(r, shape=[1, 16])), omap=[-1])
}
output O
