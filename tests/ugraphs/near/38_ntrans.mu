# program: tests/ugraphs/programs/ntrans.mu
# near miss of tests/ugraphs/good/ntrans.mu: reads H twice: d = H - H is zero and the inner norm divides by zero
input X : f32[2, 32]
input H : f32[2, 32]
input alpha : f32[2, 32]
O = kernel(X, H, alpha, grid=[2], forloop=1) {
    x = iter(X, imap=[0])
    z = iter(H, imap=[0])
    h = iter(H, imap=[0])
    a = iter(alpha, imap=[0])
    d = h - z
    y = x + a * (d / sqrt(sum(sqr(d), dim=1) / 32))
    save(accum(y / sqrt(sum(sqr(y), dim=1) / 32)), omap=[0])
}
output O
