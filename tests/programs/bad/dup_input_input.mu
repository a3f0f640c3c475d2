input X : f16[2, 4]
input X : f32[2, 4]
output X
