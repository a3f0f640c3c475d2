# program: tests/verify/programs/bcast.mu
# expect: 3
# class: layout
# why: X + B with B reshaped to a column: broadcast along the wrong axis
input X : f32[8, 8]
input B : f32[1, 8]
O = kernel(X, B, grid=[1]) {
    x = iter(X)
    b = iter(B)
    save(accum(x + reshape(b, shape=[8, 1])), omap=[-1])
}
output O
