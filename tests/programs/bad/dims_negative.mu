input A : f16[2, -3]
output A
