input X : f32[8]
O = repeat(X, times=[2147483648])
output O
