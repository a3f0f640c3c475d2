input A : f16[2147483648]
output A
