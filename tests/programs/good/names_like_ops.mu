# tensor names may spell operator names or keywords' prefixes
input exp : f16[2, 2]
input inputs : f16[2, 2]
sum = exp + inputs
max = exp(sum)
outputs = sum * max
output outputs
