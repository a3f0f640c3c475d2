# program: tests/verify/programs/smax.mu
# expect: 0
# class: float
# why: the softmax in a kernel, rows split over 4 blocks
input S : f32[4, 32]
input M : f32[4, 1]
O = kernel(S, M, grid=[4]) {
    s = iter(S, imap=[0])
    m = iter(M, imap=[0])
    e = exp(s - m)
    save(accum(e / sum(e, dim=1)), omap=[0])
}
output O
