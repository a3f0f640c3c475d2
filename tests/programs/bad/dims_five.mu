input A : f16[1, 2, 3, 4, 5]
output A
