input X : f32[8, 16]
O = sqrt(sqr(X) * 0.01)
output O
