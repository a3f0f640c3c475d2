input A : f16[0, 4]
output A
