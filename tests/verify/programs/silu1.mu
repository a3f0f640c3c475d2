input X : f32[4, 32]
O = silu(X)
output O
