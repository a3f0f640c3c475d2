input X : f32[2]
Y = X + 1.2.3
output Y
