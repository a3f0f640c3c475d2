input A : f64[2]
output A
