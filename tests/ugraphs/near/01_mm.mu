# program: tests/ugraphs/programs/mm.mu
# near miss of tests/ugraphs/good/mm.mu: replicate where it should partition: each iteration loads the whole X and W, so every term is counted 4 times
input X : f32[64, 64]
input W : f32[64, 64]
O = kernel(X, W, grid=[4], forloop=4) {
    x = iter(X)
    w = iter(W, imap=[1])
    save(accum(matmul(x, w)), omap=[1])
}
output O
