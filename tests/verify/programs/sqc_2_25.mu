input X : f32[8, 16]
O = sqrt(sqr(X) * 2.25)
output O
