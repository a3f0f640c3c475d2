input X : f32[8, 16]
O = sqrt(sqr(X) * 2 + 1)
output O
