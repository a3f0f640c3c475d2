input X : f32[8]
O = sum(X, dim=0, group=4294967296)
output O
