# program: tests/ugraphs/programs/ntrans.mu
# near miss of tests/ugraphs/good/ntrans.mu: wrong divisor in the outer norm
input X : f32[2, 32]
input H : f32[2, 32]
input alpha : f32[2, 32]
O = kernel(X, H, alpha, grid=[2], forloop=1) {
    x = iter(X, imap=[0])
    h = iter(H, imap=[0])
    a = iter(alpha, imap=[0])
    d = h - x
    y = x + a * (d / sqrt(sum(sqr(d), dim=1) / 32))
    save(accum(y / sqrt(sum(sqr(y), dim=1) / 16)), omap=[0])
}
output O
