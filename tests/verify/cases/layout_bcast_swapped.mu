# program: tests/verify/programs/bcast.mu
# expect: 3
# class: layout
# why: X + B on a 2x2 grid: B's columns split by x: blocks (0,1) and (1,0) swap B's halves
input X : f32[8, 8]
input B : f32[1, 8]
O = kernel(X, B, grid=[2, 2]) {
    x = iter(X, imap=[0, 1])
    b = iter(B, imap=[1, -1])
    save(accum(x + b), omap=[0, 1])
}
output O
