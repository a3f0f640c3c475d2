# ntrans: a small program for the μGraph tests
input X : f32[2, 32]
input H : f32[2, 32]
input alpha : f32[2, 32]
O = rmsnorm(X + alpha * rmsnorm(H - X, dim=1), dim=1)
output O
