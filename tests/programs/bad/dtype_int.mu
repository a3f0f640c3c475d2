input A : int32[2]
output A
