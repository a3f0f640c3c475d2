input X : f32[8, 8]
input B : f32[1, 8]
O = X + B
output O
