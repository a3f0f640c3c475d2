/* codegen/seqattn: the kernel of a seqattn node (ops.def; docs/ragged.md), both targets.
 * CUDA: a kernel that calls cuda/lib/seqattn.cuh's mg_seqattn (work items longest sequence
 * first, FlashAttention's loop on mma.sync). C: per (sequence, head) over OpenMP threads, the
 * reference's steps in float. Both find the sequences from the lengths input at run time,
 * clamp lengths to [0, tokens left], and write 0 to the rows past the last sequence. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cg_internal.h"

enum { SEQ_MAX_BATCH = 1024 }; /* the CUDA kernel's lengths live in shared memory */


static void emit_c(em *E, const char *const *a, const mg_dtype *ti, mg_dtype to, int64_t T, int64_t H, int64_t D, int64_t B) {
    const char *st = cg_stfn(to);
    sb_printf(E->sb,
              "    const long long T = %" PRId64 ", H = %" PRId64 ", D = %" PRId64 ", B = %" PRId64 ";\n"
              "    long long *off = (long long *)malloc((size_t)(B + 1) * sizeof *off), *len = (long long *)malloc((size_t)B * sizeof *len);\n"
              "    if (!off || !len) abort();\n"
              "    off[0] = 0;\n"
              "    for (long long b = 0; b < B; b++) {\n"
              "        const float L = %s[b];\n"
              "        len[b] = L > 0.0f ? (L < (float)T ? (long long)L : T) : 0;\n"
              "        if (len[b] > T - off[b]) len[b] = T - off[b];\n"
              "        off[b + 1] = off[b] + len[b];\n"
              "    }\n"
              "    for (long long e = off[B] * H * D; e < T * H * D; e++) %s[e] = %s(0.0f); /* past the last sequence */\n"
              "    #pragma omp parallel for collapse(2) schedule(dynamic)\n"
              "    for (long long b = 0; b < B; b++)\n"
              "    for (long long h = 0; h < H; h++) {\n"
              "        const long long L = len[b];\n"
              "        float *p = (float *)malloc((size_t)(L + 1) * sizeof(float)), *acc = (float *)malloc((size_t)D * sizeof(float));\n"
              "        if (!p || !acc) abort();\n"
              "        for (long long i = 0; i < L; i++) {\n"
              "            const long long qi = ((off[b] + i) * H + h) * D;\n"
              "            float m = -INFINITY, sum = 0.0f;\n"
              "            for (long long j = 0; j < L; j++) {\n"
              "                const long long kj = ((off[b] + j) * H + h) * D;\n"
              "                float s = 0.0f;\n"
              "                for (long long d = 0; d < D; d++) s += %s(%s[qi + d]) * %s(%s[kj + d]);\n"
              "                p[j] = s, m = s > m ? s : m;\n"
              "            }\n"
              "            for (long long j = 0; j < L; j++) p[j] = mg_exp(p[j] - m), sum += p[j];\n"
              "            for (long long d = 0; d < D; d++) acc[d] = 0.0f;\n"
              "            for (long long j = 0; j < L; j++) {\n"
              "                const long long vj = ((off[b] + j) * H + h) * D;\n"
              "                for (long long d = 0; d < D; d++) acc[d] += p[j] * %s(%s[vj + d]);\n"
              "            }\n"
              "            for (long long d = 0; d < D; d++) %s[qi + d] = %s(acc[d] / sum);\n"
              "        }\n"
              "        free(p), free(acc);\n"
              "    }\n"
              "    free(off), free(len);\n}\n\n",
              T, H, D, B, a[4], a[0], st, cg_ldfn(ti[0]), a[1], cg_ldfn(ti[1]), a[2], cg_ldfn(ti[2]), a[3], a[0], st);
}

void cg_emit_seqattn(em *E, int j, cg_program *out) {
    const ir_node *n = &E->g->nodes[j];
    const op_plan *p = E->p;
    params ps = {0};
    cg_op_params(p, j, &ps);
    char kname[64], lb[128];
    int stored = 1; /* each operand a parameter of its own buffer (one parameter when Q, K, V are one tensor) */
    for (int k = 0; k < 4; k++) stored &= p->buf[n->in[k]] >= 0;
    mg_dtype ti[3] = {p->store[n->in[0]], p->store[n->in[1]], p->store[n->in[2]]}, to = p->store[j];
    int bf = 0; /* the products' type: the first 16-bit operand's (f16 when all are f32) */
    for (int k = 2; k >= 0; k--) bf = ti[k] == MG_BF16 ? 1 : ti[k] == MG_F16 ? 0 : bf;
    int64_t T = n->shape.d[0], H = n->shape.d[1], D = n->shape.d[2], B = E->g->nodes[n->in[3]].shape.d[0];
    ir_node_label(E->g, j, lb, sizeof lb);
    if (!stored || p->store[n->in[3]] != MG_F32) {
        E->rc = ctx_err(E->ctx, MG_ERR_UNSUPPORTED, "%s: seqattn reads stored operands (lengths in f32)", lb);
        return;
    }
    if (E->tg == CG_CUDA && (D % 16 || D > 128 || B > SEQ_MAX_BATCH || ((T + 63) / 64 + B + 1) * H >= INT32_MAX)) {
        E->rc = ctx_err(E->ctx, MG_ERR_UNSUPPORTED, "%s: the GPU's seqattn takes a head dim that is a multiple of 16 up to "
                        "128 and at most %d sequences", lb, SEQ_MAX_BATCH);
        return;
    }
    if (E->tg == CG_CUDA && n->dtype == MG_F32) { /* its products on 16-bit tensor cores: ~1e-3 off, past f32's 1e-4 */
        E->rc = ctx_err(E->ctx, MG_ERR_UNSUPPORTED, "%s: the GPU's seqattn computes on 16-bit tensor cores, about 1e-3 off, "
                        "past an f32 result's tolerance (1e-4): an f32 program's attention over a ragged dim runs on the C "
                        "backend (--backend c), or write the program in f16 or bf16", lb);
        return;
    }
    const char *a[5] = {E->names[j], E->names[n->in[0]], E->names[n->in[1]], E->names[n->in[2]], E->names[n->in[3]]};
    snprintf(kname, sizeof kname, "k%d_%s", j, E->names[j] + 2);
    sb_printf(E->sb, "/* %s = seqattn (node %d): attention within each sequence */\n", lb, j);
    /* query rows a block (seqattn.cuh): 128 where the sequences average MUGEN_SEQATTN_LONG
     * tokens or more (T / B, the capacity over the batch; default 128, 0: 64 rows always;
     * docs/env.md). On sm_90a at head dims 32, 64, 128: mg_seqattn_wg, a warpgroup of 64 rows
     * each (MUGEN_SEQATTN_WG=0: mma.sync); else mg_seqattn's warps of MT strips of 16 rows. */
    const char *lg = getenv("MUGEN_SEQATTN_LONG"), *wv = getenv("MUGEN_SEQATTN_WG");
    long long lmin = lg ? atoll(lg) : 128;
    int mt = D <= 64 ? 2 : 1, bm = lmin > 0 && T >= lmin * B ? 128 : 64;
    int wg = E->tg == CG_CUDA && p->sm90a && (D == 32 || D == 64 || D == 128) && !(wv && atoi(wv) == 0);
    int threads = E->tg != CG_CUDA ? 1 : wg ? bm / 64 * 128 : bm / (16 * mt) * 32;
    /* mg_seqattn_wg's K and V stages (16 KB a stage at D = 64; MUGEN_SEQATTN_STAGES, 3 to 6)
     * and its bm query rows, in the dynamic shared memory. By default 4 stages (two tiles
     * ahead) for 128-row blocks, whose registers hold them to two blocks an SM anyway (80 KB
     * each at D = 64), and 3 for 64-row blocks, which a fourth stage would take from 4 blocks
     * an SM to 3 (H200, 4 stages: race and squad 0-1.8% faster, cola and mnli 3-6% slower;
     * docs/notes/2026-11-28-s32.md) */
    const char *sv = getenv("MUGEN_SEQATTN_STAGES");
    int stages = sv && atoi(sv) >= 3 && atoi(sv) <= 6 ? atoi(sv) : bm == 128 ? 4 : 3;
    int64_t dyn = wg ? (int64_t)(2 * stages * 64 + bm) * D * 2 : 0;
    cg_signature(E, kname, &ps, threads, E->names, 0);
    unsigned grid[3] = {1, 1, 1};
    if (E->tg == CG_CUDA) {
        cg_uses(E, CG_LIB_SEQATTN);
        if (wg)
            sb_printf(E->sb, "    mg_seqattn_wg<%" PRId64 ", %s, %d, %d>(%s, %s, %s, %s, %s, %" PRId64 ", %" PRId64 ", %" PRId64 ");\n}\n\n",
                      D, bf ? "true" : "false", bm, stages, a[0], a[1], a[2], a[3], a[4], T, H, B);
        else
            sb_printf(E->sb, "    mg_seqattn<%" PRId64 ", %s, %d, %d>(%s, %s, %s, %s, %s, %" PRId64 ", %" PRId64 ", %" PRId64 ");\n}\n\n", D,
                      bf ? "true" : "false", mt, bm, a[0], a[1], a[2], a[3], a[4], T, H, B);
        grid[0] = (unsigned)(((T + bm - 1) / bm + B + 1) * H);
    } else emit_c(E, a, ti, to, T, H, D, B);
    cg_record_launch(E, out, kname, j, &ps, grid, threads, dyn);
}
