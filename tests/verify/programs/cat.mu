input X : f32[8, 8]
input Y : f32[8, 8]
O = concat(X, Y * 1000000, dim=1)
output O
