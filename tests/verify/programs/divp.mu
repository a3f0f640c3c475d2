input X : f32[8, 16]
O = X / 4.294967087
output O
