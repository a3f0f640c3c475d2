# program: tests/verify/programs/mm.mu
# expect: 3
# class: layout
# why: split-K with W's grid dims swapped: block (x, y) pairs X's K half y with W's K half x
input X : f32[16, 32]
input W : f32[32, 16]
P = kernel(X, W, grid=[2, 2]) {
    x = iter(X, imap=[-1, 1])
    w = iter(W, imap=[0, 1])
    save(accum(matmul(x, w)), omap=[1, 0])
}
O = reshape(sum(reshape(P, shape=[2, 16, 16]), dim=0), shape=[16, 16])
output O
