# program: tests/verify/programs/onecat.mu
# expect: 0
# class: layout
# why: 127 + 1 elements concatenated and reshaped in a kernel
input X : f32[127]
input Y : f32[1]
O = kernel(X, Y, grid=[1]) {
    x = iter(X)
    y = iter(Y)
    save(accum(reshape(concat(x * 2, y * 2, dim=0), shape=[8, 16])), omap=[-1])
}
output O
