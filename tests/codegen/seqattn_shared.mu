# seqattn written directly, Q, K and V one tensor (one kernel parameter): both targets compile
# (tests/codegen/run.sh)
input len : f32[2]
input q : f16[128, 2, 64]
y = seqattn(q, q, q, len)
output y
