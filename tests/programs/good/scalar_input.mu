input s : f32[]
input X : f16[3, 3]
Y = X * s + s
Z = sum(sum(Y, dim=0), dim=0)
output Y, Z
