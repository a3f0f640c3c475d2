input X : f32[8]
O = kernel(X, grid=[1], forloop=2147483648) {
    x = iter(X)
    save(x)
}
output O
