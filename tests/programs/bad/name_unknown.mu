input X : f16[2, 4]
Z = X + Y
output Z
