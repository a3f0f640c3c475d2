input A : f32[1024, 1024, 1024, 1025]
output A
