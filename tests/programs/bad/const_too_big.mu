input X : f32[2]
Y = X * 1e50
output Y
