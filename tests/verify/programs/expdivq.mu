input X : f32[4, 16]
O = exp(X / 2.147483543)
output O
