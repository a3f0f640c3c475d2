# program: tests/verify/programs/mlp16.mu
# expect: 0
# class: inf
# why: LLaMA-like MLP in f16 against itself: its own reference overflows f16 on inputs in [-1, 1)
input X : f16[1, 256]
input W1 : f16[256, 704]
input W3 : f16[256, 704]
input W2 : f16[704, 256]
O = matmul(silu(matmul(X, W1)) * matmul(X, W3), W2) * 300
output O
