input X : f32[8, 16]
input Y : f32[8, 16]
O = X * Y
output O
