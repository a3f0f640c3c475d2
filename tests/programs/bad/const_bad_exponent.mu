input X : f32[2]
Y = X + 1e
output Y
