# program: tests/ugraphs/programs/lora.mu
# near miss of tests/ugraphs/good/lora2.mu: counts X W twice and drops the branch
input X : f32[4, 16]
input W : f32[16, 32]
input A : f32[16, 4]
input B : f32[4, 32]
O = kernel(X, W, A, B, grid=[2], forloop=1) {
    x = iter(X)
    w = iter(W, imap=[1])
    a = iter(A)
    b = iter(B, imap=[1])
    save(accum(matmul(x, w) + matmul(x, matmul(a, b)) * 0 + matmul(x, w)), omap=[1])
}
output O
