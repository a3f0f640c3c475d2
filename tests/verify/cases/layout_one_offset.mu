# program: tests/verify/programs/onecat.mu
# expect: 3
# class: layout
# why: off by one: Y placed first, every element shifted by one position
input X : f32[127]
input Y : f32[1]
O = kernel(X, Y, grid=[1]) {
    x = iter(X)
    y = iter(Y)
    save(accum(reshape(concat(y * 2, x * 2, dim=0), shape=[8, 16])), omap=[-1])
}
output O
