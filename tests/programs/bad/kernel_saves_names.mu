input X : f32[8]
O, P = kernel(X, grid=[1]) {
    x = iter(X)
    save(x)
}
output O
