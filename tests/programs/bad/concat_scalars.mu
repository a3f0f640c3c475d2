input A : f16[2]
B = concat(2, 3, dim=0)
output B
