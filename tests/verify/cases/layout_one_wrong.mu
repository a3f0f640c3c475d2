# program: tests/verify/programs/onecat.mu
# expect: 3
# class: layout
# why: one wrong element: the last one is Y*3, not Y*2
input X : f32[127]
input Y : f32[1]
O = kernel(X, Y, grid=[1]) {
    x = iter(X)
    y = iter(Y)
    save(accum(reshape(concat(x * 2, y * 3, dim=0), shape=[8, 16])), omap=[-1])
}
output O
