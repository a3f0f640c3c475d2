input X : f32[8]
O = reshape(X, shape=[2147483648, 1])
output O
