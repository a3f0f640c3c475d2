input X : f32[4, 32]
O = silu(X / 2.147483543) * X
output O
