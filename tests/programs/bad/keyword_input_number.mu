input 3 : f16[2]
output X
