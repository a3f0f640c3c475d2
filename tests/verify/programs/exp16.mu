input X : f16[8, 16]
O = exp(X * 20)
output O
