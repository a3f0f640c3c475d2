input X : f32[127]
input Y : f32[1]
O = reshape(concat(X * 2, Y * 2, dim=0), shape=[8, 16])
output O
