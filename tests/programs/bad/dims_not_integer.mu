input A : f16[2.5]
output A
