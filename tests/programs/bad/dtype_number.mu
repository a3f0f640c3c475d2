input A : 16[2]
output A
