/* asynchronous 16-byte copies into shared memory, in commit groups (cp.async, sm_80+) */
MG_DI void mg_cp16(void *s, const void *g) {
    const unsigned a = (unsigned)__cvta_generic_to_shared(s);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(a), "l"(g) : "memory");
}
/* the same with only the first `bytes` of the 16 read, the rest zero-filled (a reduced dim's
 * entries past the call's length: nothing is read there) */
MG_DI void mg_cp16z(void *s, const void *g, int bytes) {
    const unsigned a = (unsigned)__cvta_generic_to_shared(s);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(a), "l"(g), "r"(bytes) : "memory");
}
MG_DI long long mg_lmin(long long a, long long b) { return a < b ? a : b; }
/* x clamped to [0, v] */
MG_DI long long mg_lclamp(long long x, long long v) { return x < 0 ? 0 : x > v ? v : x; }
/* 16 bytes at g, only the first `bytes` (a multiple of 2) read, the rest 0 */
MG_DI uint4 mg_ld16z(const void *g, int bytes) {
    if (bytes >= 16) return *(const uint4 *)g;
    uint4 v = make_uint4(0, 0, 0, 0);
    unsigned short *d = (unsigned short *)&v;
    for (int i = 0; i < bytes / 2; i++) d[i] = ((const unsigned short *)g)[i];
    return v;
}
MG_DI void mg_cp_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> MG_DI void mg_cp_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }
/* four consecutive values stored at once (p aligned to four elements) */
MG_DI void mg_put4(float *p, float a, float b, float c, float d) { *(float4 *)p = make_float4(a, b, c, d); }
MG_DI void mg_put4(mg_h *p, float a, float b, float c, float d) {
    *(uint2 *)p = make_uint2(mg_pack<false>(a, b), mg_pack<false>(c, d));
}
MG_DI void mg_put4(mg_bh *p, float a, float b, float c, float d) {
    *(uint2 *)p = make_uint2(mg_pack<true>(a, b), mg_pack<true>(c, d));
}
/* n f16 values at p (16-byte aligned, n a multiple of 8) rewritten as bf16 in place */
MG_DI void mg_h2bf_block(void *p, int n) {
    uint4 *q = (uint4 *)p;
    for (int i = threadIdx.x; i < n / 8; i += blockDim.x) {
        uint4 v = q[i];
        v.x = mg_h2bf(v.x), v.y = mg_h2bf(v.y), v.z = mg_h2bf(v.z), v.w = mg_h2bf(v.w);
        q[i] = v;
    }
}
