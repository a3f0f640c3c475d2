input X : f32[2]
Y = X + 0.0000000000000000001
output Y
