input X : f32[127]
input Y : f32[1]
O = reshape(concat(X * 100000, Y, dim=0), shape=[8, 16])
output O
