input X : f32[8, 16]
O = sqrt(sqr(X) * 6.25)
output O
