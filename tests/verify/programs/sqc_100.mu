input X : f32[8, 16]
O = sqrt(sqr(X) * 100)
output O
