/* The optimizer's passes (opt/, listed in opt/plan.c) and the emitter (codegen/) on the
 * example μGraphs: every plan passes the plan checker (op_plan_check: among its rules, two live
 * tensors never share bytes) and a broken one does not, each pass does what it claims against
 * its ablation, and the generated code says where each block comes from.
 * Running the generated code against the reference is tests/codegen/run.sh. */
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "lower/lower.h"
#include "opt/opt.h"
#include "unit.h"

void test_plan_invariants(void);
void test_plan_passes(void);
void test_emit_readable(void);
void test_persist(void);
void test_cluster(void);
void test_matmul_warps(void);
void test_acc_scratch(void);
void test_vector_reads(void);
void test_tma_rows(void);
void test_tma_pair(void);
void test_row_grids(void);
void test_space(void);
void test_taskgraph(void);
void test_task_protocol(void);

static ir_graph *load_ugraph(const char *name) {
    char path[256], *buf = calloc(1, 1 << 16);
    if (strchr(name, '/')) snprintf(path, sizeof path, "%s", name); /* a path */
    else snprintf(path, sizeof path, "examples/ugraphs/%s.mu", name);
    FILE *f = fopen(path, "rb");
    if (!f || !buf) {
        fprintf(stderr, "cannot open %s (run the tests from the repository root)\n", path);
        abort();
    }
    buf[fread(buf, 1, (1 << 16) - 1, f)] = 0;
    fclose(f);
    ir_graph *g = unit_parse(buf);
    free(buf);
    return g;
}

/* The default options but reuse, depth and layout. */
static op_plan *plan(const ir_graph *g, int reuse, int depth, int layout) {
    mg_ctx ctx = {{0}};
    op_opts o = op_opts_default;
    o.reuse = reuse, o.depth = depth, o.layout = layout;
    op_plan *p = NULL;
    mg_status rc = op_plan_new(g, &ctx, mg_device_default(), &o, &p);
    CHECK_MSG(rc == MG_OK, "%s", ctx.msg);
    return p;
}

/* The plan keeps every invariant opt.h states (opt/check.c): among them, the memory plan's
 * tensors are aligned, inside the block's total, and never share a byte while both live. */
static void check_plan(const op_plan *p) {
    mg_ctx ctx = {{0}};
    CHECK_MSG(op_plan_check(p, &ctx) == MG_OK, "%s", ctx.msg);
}

/* Breaks GQA b=8's plan in one way at a time: op_plan_check must name each (and pass the
 * plan again once it is repaired). */
static void broken_plans(void) {
    ir_graph *g = load_ugraph("gqa_b8");
    op_plan *p = plan(g, 1, 1, 1);
    CHECK(p != NULL);
    if (!p) return;
    op_kernel *k = &p->kernels[0];
    int a = -1, b = -1, e = -1; /* a stored tensor, a second one live with it, a chain's head */
    for (int i = 0; i < k->body->n_nodes; i++) {
        const op_tensor *t = &k->t[i];
        if (t->chain.mm >= 0 && e < 0) e = i;
        if (!t->mat) continue;
        if (a < 0) a = i;
        else if (b < 0 && !(t->last < k->t[a].level || k->t[a].last < t->level)) b = i;
    }
    CHECK(a >= 0 && b >= 0 && e >= 0);
    if (a < 0 || b < 0 || e < 0) return;
    struct {
        int64_t *field, value;
        const char *says;
    } cases[] = {
        {&k->t[a].off, k->t[a].off + 8, "16-byte aligned"},          /* not a multiple of 16 */
        {&k->t[a].off, k->smem - k->t[a].bytes + 16, "16-byte aligned"}, /* past the end */
        {&k->t[b].off, k->t[a].off, "overlap in shared memory"},      /* live together, same bytes */
        {&k->smem, -1, "smem"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        mg_ctx ctx = {{0}};
        int64_t keep = *cases[c].field;
        *cases[c].field = cases[c].value;
        CHECK_MSG(op_plan_check(p, &ctx) == MG_ERR_INVALID && strstr(ctx.msg, cases[c].says), "case %zu: %s", c,
                  ctx.msg);
        *cases[c].field = keep;
        check_plan(p);
    }
    int *ints[] = {&k->sync[k->n_steps - 1], &k->t[e].chain.of, &k->n_barriers, &k->step[0]};
    const char *says[] = {"barriers", "does not hold it", "barriers", "steps and"};
    int values[] = {!k->sync[k->n_steps - 1], e, k->n_barriers + 1, k->step[k->n_steps - 1]};
    for (int c = 0; c < 4; c++) { /* a barrier miscounted, a chain's head in itself, two steps of a node */
        mg_ctx ctx = {{0}};
        int keep = *ints[c];
        *ints[c] = values[c];
        CHECK_MSG(op_plan_check(p, &ctx) == MG_ERR_INVALID && strstr(ctx.msg, says[c]), "case %d: %s", c, ctx.msg);
        *ints[c] = keep;
        check_plan(p);
    }
    /* a barrier between a chain's two writers */
    int p1 = -1, p2 = -1;
    for (int q = 0; q < k->n_steps; q++) {
        if (k->step[q] == k->t[e].chain.mw) p1 = q;
        if (k->step[q] == k->t[e].chain.sw) p2 = q;
    }
    CHECK(p1 >= 0 && p2 >= 0 && p1 != p2);
    if (p1 >= 0 && p2 >= 0 && p1 != p2) {
        mg_ctx ctx = {{0}};
        int q = p1 > p2 ? p1 : p2;
        k->sync[q] = 1, k->n_barriers++;
        CHECK_MSG(op_plan_check(p, &ctx) == MG_ERR_INVALID && strstr(ctx.msg, "between its writers"), "%s", ctx.msg);
    }
    op_plan_free(p);
    ir_graph_free(g);
}

static const char *NAMES[] = {"rmsnorm_linear_b1", "rmsnorm_linear_b8", "gated_mlp", "lora",
                              "ntrans_b1", "ntrans_b8", "gqa_b1", "gqa_b8"};

/* Every plan of the examples under 64 combinations of the switches passes op_plan_check. */
void test_plan_invariants(void) {
    for (size_t e = 0; e < sizeof NAMES / sizeof *NAMES; e++) {
        ir_graph *g = load_ugraph(NAMES[e]);
        for (int mask = 0; mask < 64; mask++) {
            mg_ctx ctx = {{0}};
            op_opts o = {.reuse = mask & 1,
                         .depth = (mask >> 1) & 1,
                         .layout = (mask >> 2) & 1,
                         .pipeline = (mask >> 3) & 1,
                         .regacc = (mask >> 4) & 1,
                         .threads = mask & 1,
                         .chain = (mask >> 5) & 1,
                         .wgmma = 0,
                         .colmajor = (mask >> 3) & 1,
                         .swizzle = (mask >> 2) & 1,
                         .persist = mask & 1,
                         .cluster = (mask >> 1) & 1};
            op_plan *p = NULL;
            if (op_plan_new(g, &ctx, mg_device_default(), &o, &p)) { /* only "does not fit" may fail */
                CHECK_MSG(!o.reuse && strstr(ctx.msg, "shared memory"), "%s: %s", NAMES[e], ctx.msg);
                continue;
            }
            check_plan(p);
            op_plan_free(p);
        }
        ir_graph_free(g);
    }
    broken_plans();
}

/* Each pass against its ablation, on the examples where it matters. */
void test_plan_passes(void) {
    ir_graph *g = load_ugraph("gqa_b1"), *r = load_ugraph("rmsnorm_linear_b1"), *l = load_ugraph("lora");
    op_plan *on = plan(g, 1, 1, 1);
    mg_ctx ctx = {{0}};
    op_opts noreuse = op_opts_default;
    noreuse.reuse = 0;
    op_plan *off = NULL;
    /* buffer layout: GQA's partial sums P [2, 256, 8 splits, 64] are written one split per
     * block: the split dim goes outermost, so each block's tile is contiguous */
    int P = ir_find(g, "P");
    CHECK(P >= 0 && on);
    if (P >= 0 && on) CHECK(on->kst[P][3] == 1 && on->kst[P][1] == 64 && on->kst[P][2] == 256 * 64 && on->kst[P][0] == 8 * 256 * 64);
    /* reuse: GQA's first kernel needs over a fifth less shared memory with reuse, at the same
     * 4-stage pipeline */
    CHECK(op_plan_new(g, &ctx, mg_device_default(), &noreuse, &off) == MG_OK);
    CHECK(on && off && on->kernels[0].smem * 5 <= off->kernels[0].smem * 4);
    CHECK(on && off && on->kernels[0].stages == 4 && off->kernels[0].stages == 4);
    op_plan_free(on), op_plan_free(off);
    /* depth: the matmul and the sum of squares share a level in RMSNorm+Linear */
    on = plan(r, 1, 1, 1), off = plan(r, 1, 0, 1);
    CHECK(on && off && on->kernels[0].n_barriers < off->kernels[0].n_barriers);
    op_plan_free(on), op_plan_free(off);
    /* layout: LoRA's concatenated [W ; B] is a matmul B operand: column-major, padded */
    on = plan(l, 1, 1, 1), off = plan(l, 1, 1, 0);
    int v = ir_find(l->nodes[ir_find(l, "O")].body, "v");
    CHECK(v >= 0 && on && off);
    if (v >= 0 && on && off) {
        const op_tensor *a = &on->kernels[0].t[v], *b = &off->kernels[0].t[v];
        CHECK(a->colmajor && !b->colmajor);
    }
    op_plan_free(on), op_plan_free(off);
    /* swizzle: RMSNorm+Linear's W tile (256-byte rows), read only as the matmul's B operand,
     * keeps unpadded rows with its 16-byte pieces swizzled; without swizzling (the C target)
     * 16 bytes of padding per row; with the layout pass off, neither */
    on = plan(r, 1, 1, 1), off = plan(r, 1, 1, 0);
    op_opts nosw = op_opts_default;
    nosw.swizzle = 0;
    op_plan *pad = NULL;
    mg_ctx c1 = {{0}};
    CHECK(op_plan_new(r, &c1, mg_device_default(), &nosw, &pad) == MG_OK);
    int w = ir_find(r->nodes[ir_find(r, "O")].body, "w");
    CHECK(w >= 0 && on && off && pad);
    if (w >= 0 && on && off && pad) {
        CHECK(on->kernels[0].t[w].tc.swz == 1 && on->kernels[0].t[w].stride[2] == 128);
        CHECK(!pad->kernels[0].t[w].tc.swz && pad->kernels[0].t[w].stride[2] == 136);
        CHECK(!off->kernels[0].t[w].tc.swz && off->kernels[0].t[w].stride[2] == 128);
    }
    op_plan_free(on), op_plan_free(off), op_plan_free(pad);
    /* pipeline: RMSNorm+Linear's 64 iterations load 4 stages ahead, W's tile 4 times over;
     * off, one stage. regacc: the matmul's tile never reaches shared memory */
    mg_ctx c2 = {{0}};
    op_opts nopipe = op_opts_default, noreg = op_opts_default;
    nopipe.pipeline = 0, noreg.regacc = 0;
    on = plan(r, 1, 1, 1), off = NULL;
    CHECK(op_plan_new(r, &c2, mg_device_default(), &nopipe, &off) == MG_OK);
    int m = ir_find(r->nodes[ir_find(r, "O")].body, "m");
    CHECK(w >= 0 && m >= 0 && on && off);
    if (w >= 0 && m >= 0 && on && off) {
        const op_kernel *a = &on->kernels[0], *b = &off->kernels[0];
        CHECK(a->stages == 4 && a->t[w].pipe.stages == 4 && a->t[w].bytes == 4 * 64 * 128 * 2 && a->n_loads == 2);
        CHECK(b->stages == 1 && b->t[w].bytes == 64 * 128 * 2);
        int mm = r->nodes[ir_find(r, "O")].body->nodes[m].in[0];
        CHECK(a->t[m].fuse.regacc == mm && a->t[mm].fuse.regacc == m && !a->t[mm].mat && a->post_sync);
    }
    op_plan_free(off), off = NULL;
    CHECK(op_plan_new(r, &c2, mg_device_default(), &noreg, &off) == MG_OK);
    if (m >= 0 && off) CHECK(off->kernels[0].t[m].fuse.regacc < 0 && !off->kernels[0].post_sync);
    op_plan_free(on), op_plan_free(off);
    ir_graph_free(g), ir_graph_free(r), ir_graph_free(l);
    /* storage types: GQA's exp tile, read only by the bf16 product and its sum, is stored
     * bf16; V (f16, read only by that product) is copied as f16 and converted once (cvt);
     * K stays f16 (its product with Q is f16 x f16); without the layout pass all stay */
    g = load_ugraph("gqa_b8");
    const ir_graph *pb = g->nodes[ir_find(g, "P")].body;
    int ge = ir_find(pb, "e"), gv = ir_find(pb, "v"), gk = ir_find(pb, "k");
    on = plan(g, 1, 1, 1), off = plan(g, 1, 1, 0);
    CHECK(ge >= 0 && gv >= 0 && gk >= 0 && on && off);
    if (ge >= 0 && gv >= 0 && gk >= 0 && on && off) {
        const op_kernel *a = &on->kernels[0], *b = &off->kernels[0];
        CHECK(a->t[ge].store == MG_BF16 && a->t[gv].store == MG_BF16 && a->t[gv].tc.cvt && a->t[gv].pipe.stages == 4);
        CHECK(a->t[gk].store == MG_F16 && !a->t[gk].tc.cvt);
        CHECK(b->t[ge].store == MG_F32 && b->t[gv].store == MG_F16 && !b->t[gv].tc.cvt);
    }
    op_plan_free(on), op_plan_free(off), ir_graph_free(g);
    /* chains: GQA b=8's exp tile, read only by its row sum and the product with V, is never
     * stored; the sum's and the product's steps share a barrier interval; two 16-row strips a
     * warp size the block (256 rows: 8 warps); V, converted in place and read in the loop's
     * first interval, gets a barrier after its conversion. Off: the tile is stored. */
    g = load_ugraph("gqa_b8");
    pb = g->nodes[ir_find(g, "P")].body;
    ge = ir_find(pb, "e"), gv = ir_find(pb, "v");
    op_opts nochain = op_opts_default;
    nochain.chain = 0;
    on = plan(g, 1, 1, 1), off = NULL;
    CHECK(op_plan_new(g, &c2, mg_device_default(), &nochain, &off) == MG_OK);
    CHECK(ge >= 0 && gv >= 0 && on && off);
    if (ge >= 0 && gv >= 0 && on && off) {
        const op_kernel *a = &on->kernels[0], *b = &off->kernels[0];
        const op_tensor *h = &a->t[ge];
        CHECK(!h->mat && h->chain.mm >= 0 && h->chain.sum >= 0 && h->chain.ts == 2 && h->chain.sk == 1);
        CHECK(a->threads == 256 && a->t[gv].tc.cvt && a->cvt_sync && a->smem < b->smem);
        int p1 = -1, p2 = -1;
        for (int q = 0; q < a->n_steps; q++) {
            if (a->step[q] == h->chain.mw) p1 = q;
            if (a->step[q] == h->chain.sw) p2 = q;
        }
        CHECK(p1 >= 0 && p2 >= 0 && a->t[h->chain.mw].chain.of == ge && a->t[h->chain.sw].chain.of == ge);
        for (int q = (p1 < p2 ? p1 : p2) + 1; q <= (p1 < p2 ? p2 : p1) && p1 >= 0 && p2 >= 0; q++) CHECK(!a->sync[q]);
        CHECK(b->t[ge].mat && b->t[ge].chain.mm < 0 && !b->cvt_sync);
        mg_ctx c3 = {{0}};
        cg_program cg;
        if (cg_emit(on, &c3, CG_CUDA, &cg) == MG_OK) {
            CHECK(strstr(cg.src, "mg_chain<8, ") && strstr(cg.src, "mg_chain_put<8, "));
            int bars = 0; /* kernel 1's planned barriers, the one after V's conversion among them */
            const char *k1 = strstr(cg.src, "extern \"C\" __global__"), *k2 = k1 ? strstr(k1 + 1, "extern \"C\"") : NULL;
            for (const char *q = k1; q && (q = strstr(q, "__syncthreads()")) && (!k2 || q < k2); q++) bars++;
            CHECK_MSG(bars == a->n_barriers, "%d barriers in the code, %d planned", bars, a->n_barriers);
            /* each kernel waits for its predecessor itself, the first included (whatever ran
             * before the program): both launched as programmatic dependents */
            CHECK(cg.n_launches == 2 && cg.launches[0].pdl && cg.launches[1].pdl);
            const char *gw = strstr(cg.src, "mg_grid_wait();"), *gw2 = gw ? strstr(gw + 1, "mg_grid_wait();") : NULL;
            CHECK(k2 && gw && gw > k1 && gw < k2 && gw2 && gw2 > k2 && !strstr(gw2 + 1, "mg_grid_wait();"));
            cg_program_free(&cg);
        } else CHECK_MSG(0, "%s", c3.msg);
        if (cg_emit(off, &c3, CG_CUDA, &cg) == MG_OK) {
            CHECK(!strstr(cg.src, "mg_chain<"));
            cg_program_free(&cg);
        } else CHECK_MSG(0, "%s", c3.msg);
    }
    op_plan_free(on), op_plan_free(off), ir_graph_free(g);
    /* four strips a block (64 rows): one strip a warp on the four warps, not two on two
     * (which left two warps multiplying clamped rows) */
    g = load_ugraph("tests/ugraphs/good/gqa_b1_q4.mu");
    on = plan(g, 1, 1, 1);
    CHECK(on != NULL);
    if (on) {
        const op_kernel *a = &on->kernels[0];
        int ts = 0;
        for (int i = 0; i < a->body->n_nodes; i++)
            if (a->t[i].chain.mm >= 0) ts = a->t[i].chain.ts;
        CHECK_MSG(ts == 1 && a->threads == 128, "%d strips a warp, %d threads", ts, a->threads);
    }
    op_plan_free(on), ir_graph_free(g);
    /* wgmma (opt-in): GQA b=8's chain takes it with Q, K and V all in the core-matrix layout
     * (unpadded, copied piece e to element 8e), A read from shared memory (256 rows: whole
     * warpgroups); every barrier first fences the async proxy. Off: none of it. QKNorm's K is
     * computed in the kernel, so its chain keeps mma.sync. */
    g = load_ugraph("gqa_b8");
    pb = g->nodes[ir_find(g, "P")].body;
    ge = ir_find(pb, "e"), gv = ir_find(pb, "v");
    int gq = ir_find(pb, "q");
    gk = ir_find(pb, "k");
    op_opts wg = op_opts_default;
    wg.wgmma = 1;
    on = off = NULL;
    CHECK(op_plan_new(g, &c2, mg_device_default(), &wg, &on) == MG_OK);
    CHECK(op_plan_new(g, &c2, mg_device_default(), &op_opts_default, &off) == MG_OK);
    CHECK(ge >= 0 && gv >= 0 && gq >= 0 && gk >= 0 && on && off);
    if (ge >= 0 && gv >= 0 && gq >= 0 && gk >= 0 && on && off) {
        const op_kernel *a = &on->kernels[0], *b = &off->kernels[0];
        CHECK(a->t[ge].chain.wg == 2 && a->t[gq].tc.wg && a->t[gk].tc.wg && a->t[gv].tc.wg && a->t[gv].store == MG_BF16);
        CHECK(a->t[gk].stride[2] == a->t[gk].dim[3] && !a->t[gk].tc.swz); /* unpadded, unswizzled */
        /* mma.sync: the chain's K and V keep padded rows, not swizzled */
        CHECK(!b->t[gv].tc.swz && !b->t[gk].tc.swz && b->t[gk].stride[2] > b->t[gk].dim[3] && b->t[gv].stride[2] > b->t[gv].dim[3]);
        CHECK(!b->t[ge].chain.wg && !b->t[gq].tc.wg && !b->t[gk].tc.wg && !b->t[gv].tc.wg && b->t[ge].chain.mm >= 0);
        mg_ctx c3 = {{0}};
        cg_program cg;
        if (cg_emit(on, &c3, CG_CUDA, &cg) == MG_OK) {
            CHECK(strstr(cg.src, "    mg_chain_wg<8, false, 1, true, ") && !strstr(cg.src, "    mg_chain<"));
            CHECK(strstr(cg.src, "mg_cp16(&s_k[e * 8], &g_K[base_ + k_ * 4096LL + n_]);"));
            int bars = 0, fences = 0; /* in kernel 1's text */
            const char *k1 = strstr(cg.src, "extern \"C\" __global__"), *k2 = k1 ? strstr(k1 + 1, "extern \"C\"") : NULL;
            for (const char *q = k1; q && (q = strstr(q, "__syncthreads();")) && (!k2 || q < k2); q++) bars++;
            for (const char *q = k1; q && (q = strstr(q, "    mg_fence_async();\n    __syncthreads();")) && (!k2 || q < k2); q++)
                fences++;
            CHECK_MSG(bars == a->n_barriers && fences == bars, "%d barriers in kernel 1 (%d planned), %d fenced", bars,
                      a->n_barriers, fences);
            cg_program_free(&cg);
        } else CHECK_MSG(0, "%s", c3.msg);
        if (cg_emit(off, &c3, CG_CUDA, &cg) == MG_OK) {
            CHECK(!strstr(cg.src, "    mg_chain_wg<") && !strstr(cg.src, "    mg_fence_async();"));
            cg_program_free(&cg);
        } else CHECK_MSG(0, "%s", c3.msg);
    }
    op_plan_free(on), op_plan_free(off), ir_graph_free(g);
    g = load_ugraph("bench/searched/qknorm_b8/ugraph-1.mu");
    on = NULL;
    CHECK(g && op_plan_new(g, &c2, mg_device_default(), &wg, &on) == MG_OK);
    if (on) {
        int chains = 0, wgs = 0;
        for (int i = 0; i < on->kernels[0].body->n_nodes; i++)
            chains += on->kernels[0].t[i].chain.mm >= 0, wgs += on->kernels[0].t[i].chain.wg;
        CHECK(chains == 1 && wgs == 0);
    }
    op_plan_free(on), ir_graph_free(g);
    /* a chain whose two writers would fall in different barrier intervals is undone: with
     * V squared first (a step of its own), the product e w comes one interval after the row
     * sum of e; with V itself both share one and the chain stays */
    static const char chain_src[] =
        "input Q : f16[1, 64, 64]\ninput K : f16[1, 64, 64]\ninput V : f16[1, 64, 64]\n"
        "A, S = kernel(Q, K, V, grid=[1], forloop=1, threads=128) {\n"
        "    q = iter(Q, imap=[0])\n    k = iter(K, imap=[0])\n    v = iter(V, imap=[0])\n"
        "    e = exp(matmul(q, k))\n    w = v * v\n"
        "    save(accum(matmul(e, %s)), omap=[0])\n    save(accum(sum(e, dim=2)), omap=[0])\n"
        "}\noutput A\noutput S\n";
    for (int split = 0; split < 2; split++) {
        char src[sizeof chain_src + 8];
        snprintf(src, sizeof src, chain_src, split ? "w" : "v");
        g = unit_parse(src);
        on = g ? plan(g, 1, 1, 1) : NULL;
        CHECK(g && on);
        if (!g || !on) continue;
        const ir_graph *cb = g->nodes[ir_find(g, "A")].body;
        int ce = ir_find(cb, "e");
        CHECK(ce >= 0);
        if (ce >= 0) {
            const op_tensor *h = &on->kernels[0].t[ce];
            CHECK_MSG(split ? h->mat && h->chain.mm < 0 : !h->mat && h->chain.mm >= 0, "split %d", split);
            check_plan(on);
        }
        op_plan_free(on), ir_graph_free(g);
    }
    /* block size of a streaming loop: RMSNorm+Linear b=1's W tile streams in ahead (cp.async,
     * two stages), swizzled for the tensor cores: 256 threads (X's concatenation alone would
     * ask 128); without the pipeline the threads load the W tile: 512 */
    g = load_ugraph("tests/ugraphs/good/rmsnorm_stream_b1.mu");
    on = plan(g, 1, 1, 1), off = NULL;
    CHECK(op_plan_new(g, &c2, mg_device_default(), &nopipe, &off) == MG_OK);
    CHECK(on && off);
    if (on && off) CHECK(on->kernels[0].threads == 256 && on->kernels[0].stages == 2 && off->kernels[0].threads == 512);
    op_plan_free(on), op_plan_free(off), ir_graph_free(g);
    /* buffer layouts: the 64-way split's partials [2 heads, 256, 64, 64 splits] go heads
     * and splits outermost; kernel 2's tiles of them are column-major (64 floats + 4 a row);
     * QKNorm's scores [2, 256, 4096], cut into 64-wide column tiles, stay row-major */
    g = load_ugraph("tests/ugraphs/good/gqa_split64.mu");
    int v4 = ir_find(g, "v4"), O = ir_find(g, "O");
    on = plan(g, 1, 1, 1);
    CHECK(v4 >= 0 && O >= 0 && on);
    if (v4 >= 0 && O >= 0 && on) {
        CHECK(on->kst[v4][0] == 64 * 256 * 64 && on->kst[v4][3] == 256 * 64 && on->kst[v4][2] == 1 && on->kst[v4][1] == 64);
        const op_tensor *t1 = &on->kernels[1].t[ir_find(g->nodes[O].body, "t1")];
        CHECK(t1->colmajor && t1->stride[2] == 1 && t1->stride[3] == 68);
    }
    op_plan_free(on), ir_graph_free(g);
    /* loop-invariant code motion: QKNorm b=8's rms(Q) reads only the fixed Q tile, so its
     * step runs before the loop; rms(K) (the moving K tile) stays in it */
    g = load_ugraph("qknorm_b8");
    on = plan(g, 1, 1, 1);
    CHECK(on != NULL);
    if (on) {
        const op_kernel *a = &on->kernels[0];
        int pre = 0, loop = 0;
        for (int q = 0; q < a->n_steps; q++)
            if (a->body->nodes[a->step[q]].op == IR_OP_SQRT) *(q < a->loop_begin ? &pre : &loop) += 1;
        CHECK(pre == 1 && loop == 1);
    }
    op_plan_free(on), ir_graph_free(g);
    g = load_ugraph("tests/ugraphs/good/qknorm_scores.mu");
    int v3 = ir_find(g, "v3");
    on = plan(g, 1, 1, 1);
    CHECK(v3 >= 0 && on);
    if (v3 >= 0 && on) CHECK(on->kst[v3][3] == 1 && on->kst[v3][2] == 4096 && on->kst[v3][1] == 256 * 4096);
    /* padding for column reductions: kernel 1's K tile [64, 64] f16, summed over its rows
     * for the norm, gets 8 elements of padding a row; kernel 2's V tile is read by a product
     * of 4 rows (one warp loads each element): no in-place conversion, it stays f16 */
    if (on) {
        const ir_graph *b1 = g->nodes[v3].body, *b2 = g->nodes[ir_find(g, "O")].body;
        int kt = ir_find(b1, "t2"), vt = ir_find(b2, "t0");
        CHECK(kt >= 0 && vt >= 0);
        if (kt >= 0) CHECK(on->kernels[0].t[kt].stride[2] == 72);
        if (vt >= 0) CHECK(!on->kernels[1].t[vt].tc.cvt && on->kernels[1].t[vt].store == MG_F16);
    }
    op_plan_free(on), ir_graph_free(g);
    /* layout: tiles written by mma fragments (eight rows a warp) get padded rows: GQA b=8's
     * register accumulator p [256, 64] f32 (256-byte rows: 8-way bank conflicts unpadded)
     * and LoRA's result of matmul(z, v); unpadded with the layout pass off */
    g = load_ugraph("gqa_b8");
    on = plan(g, 1, 1, 1), off = plan(g, 1, 1, 0);
    if (on && off) {
        const ir_graph *b = g->nodes[ir_find(g, "P")].body;
        int pa = ir_find(b, "p");
        CHECK(pa >= 0);
        if (pa >= 0) {
            CHECK(on->kernels[0].t[pa].fuse.regacc >= 0);
            CHECK_MSG(on->kernels[0].t[pa].stride[2] == 68 && off->kernels[0].t[pa].stride[2] == 64, "row strides %lld, %lld",
                      (long long)on->kernels[0].t[pa].stride[2], (long long)off->kernels[0].t[pa].stride[2]);
        }
        check_plan(on);
    }
    op_plan_free(on), op_plan_free(off), ir_graph_free(g);
    g = load_ugraph("tests/ugraphs/good/lora_cols32.mu"); /* t4 = X W: f32 [16, 32] */
    on = plan(g, 1, 1, 1), off = plan(g, 1, 1, 0);
    if (on && off) {
        const ir_graph *b = g->nodes[ir_find(g, "O")].body;
        int t4 = ir_find(b, "t4");
        CHECK(t4 >= 0 && b->nodes[t4].op == IR_OP_MATMUL);
        if (t4 >= 0) CHECK(on->kernels[0].t[t4].stride[2] == 36 && off->kernels[0].t[t4].stride[2] == 32);
    }
    op_plan_free(on), op_plan_free(off), ir_graph_free(g);
    /* recompute (operator scheduling): nTrans's d = h - x and y, each read by a sum of
     * squares and one more elementwise reader, are computed by both in a one-iteration block
     * instead of stored behind a barrier; the block keeps 512 threads for its reductions'
     * 4096 reads. With depth scheduling off both are stored. */
    g = load_ugraph("ntrans_b1");
    on = plan(g, 1, 1, 1), off = plan(g, 1, 0, 1);
    if (on && off) {
        const ir_graph *b = g->nodes[ir_find(g, "O")].body;
        int d = ir_find(b, "d"), y = ir_find(b, "y");
        CHECK(d >= 0 && y >= 0);
        if (d >= 0 && y >= 0) {
            CHECK(!on->kernels[0].t[d].mat && !on->kernels[0].t[y].mat);
            CHECK(off->kernels[0].t[d].mat && off->kernels[0].t[y].mat);
        }
        CHECK_MSG(on->kernels[0].threads == 512 && on->kernels[0].n_barriers + 2 <= off->kernels[0].n_barriers,
                  "%d threads, %d barriers against %d", on->kernels[0].threads, on->kernels[0].n_barriers,
                  off->kernels[0].n_barriers);
        check_plan(on);
    }
    op_plan_free(on), op_plan_free(off), ir_graph_free(g);
}

/* The CUDA text: one kernel per graph-defined operator, a comment per step naming its node,
 * one barrier per planned barrier, tensor cores for the block matmuls. */
void test_emit_readable(void) {
    ir_graph *g = load_ugraph("rmsnorm_linear_b1");
    op_plan *p = plan(g, 1, 1, 1);
    mg_ctx ctx = {{0}};
    cg_program cg;
    CHECK(p && cg_emit(p, &ctx, CG_CUDA, &cg) == MG_OK);
    if (p && cg.src) {
        CHECK(cg.n_launches == 1 && cg.launches[0].grid[0] == 48 && cg.launches[0].block == 256);
        CHECK(strstr(cg.src, "/* iter, pipelined: x = iter (node 0) */") && strstr(cg.src, "/* accum: s = accum"));
        /* ldmatrix for both (W swizzled: mode 1 | 1 << 4), 1 tile a warp, depth split in 2 */
        CHECK(strstr(cg.src, "mg_mm_acc<false, 1, 17, 1, 2>(r_s_m, s_x, s_w"));
        CHECK(strstr(cg.src, "mg_cp16(&s_w[") && strstr(cg.src, "((c3 ^ (") && strstr(cg.src, "mg_cp_wait<3>()"));
        int bars = 0;
        const char *body = strstr(cg.src, "extern \"C\" __global__"); /* the prelude's own do not count */
        for (const char *s = body; s && (s = strstr(s, "__syncthreads()")); s++) bars++;
        const op_kernel *k = &p->kernels[0];
        CHECK_MSG(bars == k->n_barriers, "%d barriers in the code, %d planned", bars, k->n_barriers);
        cg_program_free(&cg);
    }
    op_plan_free(p);
    ir_graph_free(g);
}

/* The persistent launch (op_opts.persist, opt-in): GQA b=1's two kernels become one launch with a
 * task per block of each at the first kernel's block size (the combining kernel, sized
 * otherwise alone, planned again), with a zeroed buffer of a ticket, a done flag a task and a
 * leave count as its last argument; each task waits for the tasks of its row in the source's
 * dependency tables, the task graph's (kernel 1's for none, each combine block for the splits
 * of its own head only, fewer than all of kernel 1's). The static schedule (persist 2): the
 * same tasks in a loop over b, b + G, ... and a launch the runtime keeps co-resident. Off: two
 * launches. One kernel (RMSNorm + Linear): nothing to fuse. The C target writes the same plan
 * as separate functions. */
void test_persist(void) {
    ir_graph *g = load_ugraph("gqa_b1"), *r = load_ugraph("rmsnorm_linear_b1");
    mg_ctx ctx = {{0}};
    op_plan *on = NULL, *off = NULL, *one = NULL;
    op_opts yes = op_opts_default;
    yes.persist = 1;
    CHECK(op_plan_new(g, &ctx, mg_device_default(), &yes, &on) == MG_OK);
    CHECK(op_plan_new(g, &ctx, mg_device_default(), &op_opts_default, &off) == MG_OK);
    CHECK(op_plan_new(r, &ctx, mg_device_default(), &yes, &one) == MG_OK);
    if (on && off && one) {
        CHECK(on->fused && !off->fused && !one->fused && on->n_kernels == 2);
        int T = off->kernels[0].threads;
        CHECK_MSG(on->kernels[0].threads == T && on->kernels[1].threads == T && off->kernels[1].threads != T,
                  "threads %d, %d (alone %d, %d)", on->kernels[0].threads, on->kernels[1].threads, T, off->kernels[1].threads);
        int64_t smem = on->kernels[0].smem > on->kernels[1].smem ? on->kernels[0].smem : on->kernels[1].smem;
        unsigned n0 = 1, n1 = 1;
        for (int d = 0; d < 3; d++) n0 *= (unsigned)on->kernels[0].body->grid[d], n1 *= (unsigned)on->kernels[1].body->grid[d];
        cg_program cg;
        char want[96];
        if (cg_emit(on, &ctx, CG_CUDA, &cg) == MG_OK) {
            const cg_launch *l = &cg.launches[0];
            /* as many blocks as kernel 1's on 132 multiprocessors (one each), taking n0 + n1 tasks */
            unsigned want_blocks = 132 * ((n0 > n1 ? n0 : n1) + 131) / 132;
            want_blocks = want_blocks < n0 + n1 ? want_blocks : n0 + n1;
            CHECK_MSG(cg.n_launches == 1 && l->grid[0] == want_blocks && l->grid[1] == 1 && l->block == (unsigned)T && !l->pdl,
                      "%u blocks of %u", l->grid[0], l->block);
            snprintf(want, sizeof want, "if (t_ >= %u || mg_task_wait(g_sync_, %u, t_, ", n0 + n1, n0 + n1);
            CHECK(strstr(cg.src, want) && strstr(cg.src, "const int t_ = mg_ticket(g_sync_, slot_);") && !l->coresident);
            /* tickets, done flags, the blocks that left, the watchdog's three words, the launches' counts */
            CHECK(l->smem == smem + 16 && cg.sync_buf == cg.n_bufs - 1 && cg.buf_bytes[cg.sync_buf] == 4 * (n0 + n1 + 5 + 2)); /* + a count a launch */
            CHECK(cg.n_tasks == (int)(n0 + n1) && cg.n_task_launches == 2 && cg.task_first[1] == (int)n0);
            CHECK(l->n_args > 0 && l->args[l->n_args - 1] == cg.sync_buf);
            op_taskgraph *tg = NULL;
            CHECK(op_taskgraph_new(on, &ctx, &tg) == MG_OK && tg->n_tasks == (int)(n0 + n1));
            if (tg) {
                CHECK(tg->dep_at[n0] == 0 && tg->n_deps > 0 && tg->n_deps < (int64_t)n0 * n1);
                /* no combine block waits for all of kernel 1: every dependency its own entry */
                snprintf(want, sizeof want, "dependencies (opt/taskgraph.c): %lld for %u tasks, %lld entries", (long long)tg->n_deps,
                         n0 + n1, (long long)tg->n_deps);
                CHECK(strstr(cg.src, want));
                op_taskgraph_free(tg);
            }
            snprintf(want, sizeof want, "mg_leave(g_sync_, %u, 2, ", n0 + n1);
            const char *k = strstr(cg.src, "__global__");
            CHECK(k && strstr(k, "mg_task_wait(g_sync_, ") && strstr(k, "mg_task_done(g_sync_, ") && strstr(k, want));
            CHECK(k && !strstr(k, "mg_grid_wait();") && !strstr(k + 1, "__global__")); /* one kernel */
            cg_program_free(&cg);
        } else CHECK_MSG(0, "%s", ctx.msg);
        if (cg_emit(off, &ctx, CG_CUDA, &cg) == MG_OK) {
            CHECK(cg.n_launches == 2 && cg.sync_buf == -1 && !strstr(cg.src, "mg_task_after(g_sync_"));
            cg_program_free(&cg);
        } else CHECK_MSG(0, "%s", ctx.msg);
        op_opts st = yes; /* the static schedule: block b runs tasks b, b + G, ...; co-resident */
        st.persist = 2;
        op_plan *sp = NULL;
        CHECK(op_plan_new(g, &ctx, mg_device_default(), &st, &sp) == MG_OK && sp && sp->fused);
        if (sp && cg_emit(sp, &ctx, CG_CUDA, &cg) == MG_OK) {
            const char *k = strstr(cg.src, "__global__");
            CHECK(cg.n_launches == 1 && cg.launches[0].coresident && k && strstr(k, "for (int t_ = blockIdx.x;; t_ += gridDim.x) {") &&
                  !strstr(k, "mg_ticket(") && strstr(k, "mg_task_done(g_sync_, "));
            cg_program_free(&cg);
        } else CHECK_MSG(0, "%s", ctx.msg);
        op_plan_free(sp);
        op_opts c = yes; /* the C target's plan (driver.c) but fused */
        c.chain = c.swizzle = 0;
        op_plan_free(off), off = NULL;
        CHECK(op_plan_new(g, &ctx, mg_device_default(), &c, &off) == MG_OK && off->fused);
        if (off && cg_emit(off, &ctx, CG_C, &cg) == MG_OK) {
            CHECK(cg.n_launches == 2 && cg.sync_buf == -1);
            cg_program_free(&cg);
        } else CHECK_MSG(0, "%s", ctx.msg);
    }
    op_plan_free(on), op_plan_free(off), op_plan_free(one);
    ir_graph_free(g), ir_graph_free(r);
}

/* Cluster fusion (op_opts.cluster, opt-in): GQA b=8's combine reads, per block, one head's 8
 * key splits, so the chain kernel launches in clusters of [1, 8, 1] and block (h, s) then runs
 * the combine's block (h, s) (the identity map); GQA b=1 over 16 splits (tests/ugraphs/good/
 * gqa_b1_q4.mu) takes clusters of 16 along z and a map where each combine block lands in the
 * cluster of its own head and 64-row block, every combine block once. The 32-split design and
 * a one-kernel graph are left alone, and so is everything with the option off. */
void test_cluster(void) {
    op_opts on = op_opts_default;
    on.cluster = 1;
    const char *files[] = {"bench/searched/gqa_b8/ugraph-1.mu", "tests/ugraphs/good/gqa_b1_q4.mu",
                           "bench/searched/gqa_b1/ugraph-43.mu", "rmsnorm_linear_b1"};
    for (int f = 0; f < 4; f++) {
        ir_graph *g = load_ugraph(files[f]);
        mg_ctx ctx = {{0}};
        op_plan *p = NULL, *off = NULL;
        CHECK(op_plan_new(g, &ctx, mg_device_default(), &on, &p) == MG_OK);
        CHECK(op_plan_new(g, &ctx, mg_device_default(), &op_opts_default, &off) == MG_OK);
        if (!p || !off) continue;
        CHECK_MSG(p->clustered == (f < 2) && !off->clustered, "%s: clustered %d", files[f], p->clustered);
        if (f < 2 && p->clustered) {
            const int *g1 = p->kernels[0].body->grid, *g2 = p->kernels[1].body->grid;
            int n = g1[0] * g1[1] * g1[2], seen[1024] = {0}, want[3] = {1, f == 0 ? 8 : 1, f == 0 ? 1 : 16};
            CHECK(p->cluster[0] == want[0] && p->cluster[1] == want[1] && p->cluster[2] == want[2]);
            CHECK(p->kernels[1].threads == p->kernels[0].threads);
            for (int i = 0; i < n; i++) {
                int j = p->cluster_map[i];
                CHECK(j >= 0 && j < n && !seen[j]);
                if (j < 0 || j >= n) continue;
                seen[j] = 1;
                int b1[3] = {i % g1[0], i / g1[0] % g1[1], i / (g1[0] * g1[1])};
                int b2[3] = {j % g2[0], j / g2[0] % g2[1], j / (g2[0] * g2[1])};
                if (f == 0) CHECK(j == i);
                else CHECK_MSG(b2[0] == b1[0] && b2[1] / 8 == b1[1], "block %d (%d %d %d) runs %d (%d %d %d)", i, b1[0],
                               b1[1], b1[2], j, b2[0], b2[1], b2[2]);
            }
            cg_program cg;
            if (cg_emit(p, &ctx, CG_CUDA, &cg) == MG_OK) {
                const cg_launch *l = &cg.launches[0];
                int64_t smem = p->kernels[0].smem > p->kernels[1].smem ? p->kernels[0].smem : p->kernels[1].smem;
                CHECK(cg.n_launches == 1 && l->grid[0] == (unsigned)g1[0] && l->grid[1] == (unsigned)g1[1] &&
                      l->grid[2] == (unsigned)g1[2] && l->smem == smem && !l->pdl);
                CHECK(l->cluster[0] == (unsigned)want[0] && l->cluster[1] == (unsigned)want[1] && l->cluster[2] == (unsigned)want[2]);
                const char *s1 = strstr(cg.src, "    mg_cluster_sync();");
                CHECK(s1 && !strstr(s1 + 1, "    mg_cluster_sync();") && strstr(cg.src, "_map[blockIdx.x + "));
                cg_program_free(&cg);
            } else CHECK_MSG(0, "%s", ctx.msg);
        }
        op_plan_free(p), op_plan_free(off);
        ir_graph_free(g);
    }
}

/* Tensor-core matmuls of one barrier interval start on different warps: LoRA's X W (two
 * 16x32 tiles, warps 0 and 1) and X A (one tile) side by side, the X A tile on warp 2; after
 * the barrier, (X A) B starts on warp 0 again (measured: LoRA 4.1 -> 3.7 us, notes §26). */
void test_matmul_warps(void) {
    ir_graph *g = load_ugraph("bench/searched/lora/ugraph-9.mu");
    op_plan *p = plan(g, 1, 1, 1);
    mg_ctx ctx = {{0}};
    cg_program cg;
    CHECK(p && cg_emit(p, &ctx, CG_CUDA, &cg) == MG_OK);
    if (p && cg.src) {
        const char *a = strstr(cg.src, "    mg_mm_tc<false, 1, 17, 0>(s_t4, s_t0, s_t1,");
        const char *b = a ? strstr(a, "    mg_mm_tc<false, 1, 1, 2>(s_t5, s_t0, s_t2,") : NULL;
        /* X A is an f16 value (layout.c f16_values): (X A) B is an f16 product too */
        const char *c = b ? strstr(b, "    mg_mm_tc<false, 1, 17, 0>(s_t7, s_t5, s_t3,") : NULL;
        CHECK_MSG(a && b && c, "%s", a ? a : "no X W matmul");
        CHECK(b && c && strstr(b, "__syncthreads()") < c); /* a barrier between, so W0 starts over */
        cg_program_free(&cg);
    }
    op_plan_free(p);
    ir_graph_free(g);
}

/* The split-K groups of a register accumulator store side by side: RMSNorm+Linear b=1's X W
 * (two 16x32 tiles, 8 warps: 4 groups) gets 3 dense [2, 64] f32 copies of scratch after
 * every other tensor, inside the plan's shared memory, and the store is handed it; with the
 * shared memory full, no scratch and the groups add one at a time. */
void test_acc_scratch(void) {
    ir_graph *g = load_ugraph("bench/searched/rmsnorm_linear_b1/ugraph-1.mu");
    op_plan *p = plan(g, 1, 1, 1);
    CHECK(p && p->n_kernels == 1);
    if (p && p->n_kernels == 1) {
        const op_kernel *k = &p->kernels[0];
        CHECK_MSG(k->acc_scratch >= 0 && k->acc_scratch % 16 == 0 && k->smem == k->acc_scratch + 3 * 2 * 64 * 4,
                  "scratch at %lld, smem %lld", (long long)k->acc_scratch, (long long)k->smem);
        for (int i = 0; i < k->body->n_nodes; i++)
            if (k->t[i].mat) CHECK(k->t[i].off + k->t[i].bytes <= k->acc_scratch);
        mg_ctx ctx = {{0}};
        cg_program cg;
        char want[96];
        snprintf(want, sizeof want, "mg_mm_acc_store<1, 4>(s_t6, r_s_t6, (float *)(smem + %lld), ", (long long)k->acc_scratch);
        CHECK(cg_emit(p, &ctx, CG_CUDA, &cg) == MG_OK && strstr(cg.src, want));
        cg_program_free(&cg);
    }
    mg_device small = *mg_device_default();
    small.smem_per_block = p ? p->kernels[0].acc_scratch : 0; /* everything but the scratch fits */
    mg_ctx ctx = {{0}};
    op_plan *q = NULL;
    CHECK(op_plan_new(g, &ctx, &small, &op_opts_default, &q) == MG_OK && q->kernels[0].acc_scratch < 0);
    if (q && p) CHECK(q->kernels[0].smem == p->kernels[0].acc_scratch);
    op_plan_free(p), op_plan_free(q);
    ir_graph_free(g);
}

/* Two load shapes the emitter picks from the plan's layouts: GQA b=1's partial sums (an f32
 * tile with rows of 64, padded to 68) are saved four at a time from one float4 load, and
 * nTrans's row norms over f16 tiles give each lane four neighbours (r_ = l_ * 4), where a
 * norm over an f32 tile (RMSNorm+Linear b=1's X, collected in f32) keeps lanes reading every
 * lanes-th element. The C target does neither. */
void test_vector_reads(void) {
    ir_graph *g = load_ugraph("bench/searched/gqa_b1/ugraph-1.mu"), *nt = load_ugraph("bench/searched/ntrans_b1/ugraph-1.mu");
    op_plan *p = plan(g, 1, 1, 1), *q = plan(nt, 1, 1, 1);
    mg_ctx ctx = {{0}};
    cg_program cg;
    if (p && cg_emit(p, &ctx, CG_CUDA, &cg) == MG_OK) {
        const char *sv = strstr(cg.src, "mg_put4(&g_v4[");
        const char *ld = strstr(cg.src, "const float4 q4_ = *(const float4 *)&(s_t8[");
        CHECK_MSG(ld && sv && ld < sv && strstr(sv, "q4_.x,") && strstr(sv, "q4_.w);"), "%s", sv ? sv : "no save of v4");
        cg_program_free(&cg);
    } else CHECK_MSG(0, "%s", ctx.msg);
    if (q && cg_emit(q, &ctx, CG_CUDA, &cg) == MG_OK) {
        const char *a = strstr(cg.src, "for (int r_ = l_ * 4; r_ < 4096; r_ += 2048) {");
        CHECK(a && strstr(a + 1, "for (int r_ = l_ * 4; r_ < 4096; r_ += 2048) {") && !strstr(cg.src, "for (int r_ = l_; "));
        CHECK(a && strstr(a, "r_ + 1) * 1]") && !strstr(a, "r_ + 512) * 1]"));
        cg_program_free(&cg);
    } else CHECK_MSG(0, "%s", ctx.msg);
    if (q && cg_emit(q, &ctx, CG_C, &cg) == MG_OK) {
        CHECK(!strstr(cg.src, "l_ * 4") && !strstr(cg.src, "q4_"));
        cg_program_free(&cg);
    } else CHECK_MSG(0, "%s", ctx.msg);
    ir_graph *rg = load_ugraph("bench/searched/rmsnorm_linear_b1/ugraph-1.mu");
    op_plan *r = plan(rg, 1, 1, 1);
    if (r && cg_emit(r, &ctx, CG_CUDA, &cg) == MG_OK) {
        CHECK(strstr(cg.src, "for (int r_ = l_; r_ < 4096; r_ += 512) {") && !strstr(cg.src, "l_ * 4"));
        cg_program_free(&cg);
    } else CHECK_MSG(0, "%s", ctx.msg);
    op_plan_free(p), op_plan_free(q), op_plan_free(r);
    ir_graph_free(g), ir_graph_free(nt), ir_graph_free(rg);
}

/* Products of 1-7 rows on the swapped TMA path (opt/tma.c, op_tma_rows): Y [M, 512] W [512,
 * 256] in 4 column blocks, 4 iterations of 128: with M = 1, 2, 4 and 8 the loop loads by TMA
 * (op_kernel.tma 2), Y's stages hold boxes of 8 rows (pipe.elems 8 x 128) and its tensor map is
 * the [M, 512] view read in boxes of 8 x 64; the product runs as wgmma's n8 and stores Y's M
 * rows only. 12 rows (not a whole 8, 16 or 32) stay on mma.sync. */
void test_tma_rows(void) {
    static const int rows[] = {1, 2, 4, 8, 12};
    for (int q = 0; q < (int)(sizeof rows / sizeof *rows); q++) {
        int M = rows[q];
        char src[1024], want[64];
        snprintf(src, sizeof src,
                 "input Y : f16[%d, 512]\ninput W : f16[512, 256]\n"
                 "O = kernel(Y, W, grid=[4], forloop=4) {\n"
                 "    t0 = iter(Y, imap=[-1], fmap=1)\n    t1 = iter(W, imap=[1], fmap=0)\n"
                 "    t2 = matmul(t0, t1)\n    t3 = accum(t2)\n    save(t3, omap=[1])\n}\noutput O\n", M);
        ir_graph *g = unit_parse(src);
        op_plan *p = g ? plan(g, 1, 1, 1) : NULL;
        mg_ctx ctx = {{0}};
        cg_program cg = {0};
        CHECK_MSG(p && cg_emit(p, &ctx, CG_CUDA, &cg) == MG_OK, "M = %d: %s", M, ctx.msg);
        if (p && cg.src) {
            const op_kernel *k = &p->kernels[0];
            const cg_launch *L = &cg.launches[0];
            if (M == 12) CHECK_MSG(k->tma == 0 && L->n_tmaps == 0, "12 rows: tma %d", k->tma);
            else {
                CHECK_MSG(k->tma == 2 && k->t[0].tc.tma && op_tma_rows(&k->t[0]) == 8 && k->t[0].pipe.elems == 8 * 128,
                          "M = %d: tma %d, Y's stage %lld elements", M, k->tma, (long long)k->t[0].pipe.elems);
                CHECK_MSG(L->n_tmaps == 2 && L->tmaps[0].box[0] == 64 && L->tmaps[0].box[1] == 8 &&
                              L->tmaps[0].dims[0] == 512 && L->tmaps[0].dims[1] == M && L->tmaps[0].row_bytes == 1024,
                          "M = %d: Y's map [%lld, %lld] box %u x %u", M, (long long)L->tmaps[0].dims[1],
                          (long long)L->tmaps[0].dims[0], L->tmaps[0].box[1], L->tmaps[0].box[0]);
                snprintf(want, sizeof want, "mg_tma_acc_store_t<8, %d>(", M);
                CHECK_MSG(strstr(cg.src, "mg_tma_mm_t<false, 8, 128>(") && strstr(cg.src, want), "M = %d", M);
            }
        }
        check_plan(p);
        cg_program_free(&cg);
        op_plan_free(p);
        ir_graph_free(g);
    }
}

/* Plans program src lowered (lw_lower, the default tiling) for the default device. */
static op_plan *plan_lowered_with(const char *src, ir_graph **g, ir_graph **u, const op_opts *o) {
    mg_ctx ctx = {{0}};
    *g = unit_parse(src), *u = NULL;
    op_plan *p = NULL;
    CHECK_MSG(*g && lw_lower(*g, &ctx, mg_device_default(), 0, NULL, u, NULL) == MG_OK, "%s", ctx.msg);
    if (*u) CHECK_MSG(op_plan_new(*u, &ctx, mg_device_default(), o, &p) == MG_OK, "%s", ctx.msg);
    return p;
}

static op_plan *plan_lowered(const char *src, ir_graph **g, ir_graph **u) {
    return plan_lowered_with(src, g, u, &op_opts_default);
}

/* Two blocks an SM for short TMA loops (opt/tma.c, memory.c, docs/codegen.md): a product of
 * 16,384 x 512 x 512 lowers to 128 x 128 tiles (512 blocks: two waves) as two m64n128
 * warpgroups; its 8 iterations ask for two blocks an SM: 3 stages within half an SM's shared
 * memory and __launch_bounds__(256, 2). The same rows with a depth of 2,048 (32 iterations)
 * keep one block and 6 stages; 64 rows keep one block (too few blocks to pair). */
void test_tma_pair(void) {
    static const struct { int rows, depth, blocks, stages; } cs[] = {{16384, 512, 2, 3}, {16384, 2048, 1, 6}, {64, 512, 1, 0}};
    const mg_device *dev = mg_device_default();
    for (int c = 0; c < 3; c++) {
        char src[256], want[64];
        snprintf(src, sizeof src, "input X : f16[%d, %d]\ninput W : f16[%d, 512]\nO = matmul(X, W)\noutput O\n",
                 cs[c].rows, cs[c].depth, cs[c].depth);
        ir_graph *g, *u;
        op_plan *p = plan_lowered(src, &g, &u);
        mg_ctx ctx = {{0}};
        cg_program cg = {0};
        CHECK_MSG(p && cg_emit(p, &ctx, CG_CUDA, &cg) == MG_OK, "case %d: %s", c, ctx.msg);
        if (p && cg.src) {
            const op_kernel *k = &p->kernels[p->n_kernels - 1];
            CHECK_MSG(k->min_blocks == cs[c].blocks, "case %d: %d blocks an SM", c, k->min_blocks);
            if (cs[c].rows > 64)
                CHECK_MSG(k->tma == 1 && k->tma_nw == 128 && k->threads == 256 && k->stages == cs[c].stages,
                          "case %d: tma %d, %d columns a warpgroup, %d threads, %d stages", c, k->tma, k->tma_nw,
                          k->threads, k->stages);
            if (cs[c].blocks == 2) {
                CHECK_MSG(2 * (k->smem + 1024) <= dev->smem_per_block + 1024, "smem %lld", (long long)k->smem);
                CHECK_MSG(strstr(cg.src, "__launch_bounds__(256, 2)") != NULL, "no __launch_bounds__(256, 2)");
            } else {
                snprintf(want, sizeof want, "__launch_bounds__(%d)", k->threads);
                CHECK_MSG(strstr(cg.src, want) != NULL, "case %d: no %s", c, want);
            }
        }
        check_plan(p);
        cg_program_free(&cg);
        op_plan_free(p);
        ir_graph_free(g), ir_graph_free(u);
    }
}

/* The task graph (opt/taskgraph.c, issue #27): RMSNorm + a 1-row projection lowers to a norm
 * kernel, a split-K product and its adding kernel; each product block waits for the norm's one
 * task, each adding block for exactly the splits of its own 64-column tile (not the whole
 * product), and the graph passes its check. Dropping one dependency, or listing a later task,
 * fails the check with a message naming the task. A read through a slice (a view) waits for
 * the producer blocks of the slice's columns only. The decode step's kernel-level operators
 * (concat) are a task a piece of 4,096 elements, waited for whole; its graph checks too, and
 * as one static persistent launch every launch is in it (the concats as element-loop tasks)
 * and waits for a whole launch are one entry each (its count). */
void test_taskgraph(void) {
    ir_graph *g, *u;
    op_plan *p = plan_lowered("input X : f16[1, 4096]\ninput G : f16[4096]\ninput W : f16[4096, 4096]\n"
                              "O = matmul(rmsnorm(X, dim=1) * G, W)\noutput O\n", &g, &u);
    mg_ctx ctx = {{0}};
    op_taskgraph *tg = NULL;
    CHECK(p && op_taskgraph_new(p, &ctx, &tg) == MG_OK && tg);
    if (tg && tg->n_launches == 3) {
        const ir_graph *prod = p->g->nodes[tg->node[1]].body, *add = p->g->nodes[tg->node[2]].body;
        int splits = prod->grid[1], cols = prod->grid[0], ok = splits > 1 && tg->first[1] == 1;
        for (int t = tg->first[1]; t < tg->first[2]; t++)
            ok &= tg->dep_at[t + 1] - tg->dep_at[t] == 1 && tg->dep[tg->dep_at[t]] == 0;
        /* adding block j reads columns [16 j, 16 j + 16): the product's tile j / 4 in every split */
        int per = (int)(add->grid[0] / cols);
        for (int t = tg->first[2]; t < tg->n_tasks; t++) {
            int j = tg->block[t], n = (int)(tg->dep_at[t + 1] - tg->dep_at[t]);
            ok &= n == splits;
            for (int64_t e = tg->dep_at[t]; e < tg->dep_at[t + 1]; e++) {
                int d = tg->dep[e];
                ok &= tg->launch[d] == 1 && tg->block[d] % cols == j / per;
            }
        }
        CHECK_MSG(ok, "grid [%d, %d] then %d adding blocks", cols, splits, add->grid[0]);
        CHECK_MSG(op_taskgraph_check(p, tg, &ctx) == MG_OK, "%s", ctx.msg);
        CHECK(tg->n_exact == tg->n_deps && tg->n_deps == (tg->first[2] - tg->first[1]) + (int64_t)(tg->n_tasks - tg->first[2]) * splits);
        /* the last task waits for one split fewer */
        int last = tg->n_tasks - 1;
        tg->dep_at[last + 1]--, tg->n_deps--;
        CHECK(op_taskgraph_check(p, tg, &ctx) == MG_ERR_INVALID && strstr(ctx.msg, "write only") &&
              strstr(ctx.msg, "task graph: task"));
        tg->dep_at[last + 1]++, tg->n_deps++;
        /* a product block listing a later task */
        int keep = tg->dep[tg->dep_at[1]];
        tg->dep[tg->dep_at[1]] = 5;
        CHECK(op_taskgraph_check(p, tg, &ctx) == MG_ERR_INVALID && strstr(ctx.msg, "not an earlier task"));
        tg->dep[tg->dep_at[1]] = keep;
        CHECK(op_taskgraph_check(p, tg, &ctx) == MG_OK);
    } else CHECK_MSG(0, "%d launches", tg ? tg->n_launches : -1);
    op_taskgraph_free(tg), op_plan_free(p), ir_graph_free(u), ir_graph_free(g);
    /* through a view: O's blocks read Z = columns 128..255 of Y (a slice, no copy), so each
     * waits for Y's adding blocks 8..15 (16 columns each) and none of 0..7 */
    p = plan_lowered("input X : f16[1, 1024]\ninput W : f16[1024, 256]\ninput V : f16[128, 512]\nY = matmul(X, W)\n"
                     "Z = slice(Y, dim=1, start=128, len=128)\nO = matmul(Z, V)\noutput O\n", &g, &u);
    tg = NULL;
    CHECK(p && op_taskgraph_new(p, &ctx, &tg) == MG_OK);
    if (tg && tg->n_launches == 3 && p->g->nodes[tg->node[1]].body->grid[0] == 16) {
        int ok = 1;
        for (int t = tg->first[2]; t < tg->n_tasks; t++) {
            ok &= tg->dep_at[t + 1] - tg->dep_at[t] == 8;
            for (int64_t e = tg->dep_at[t]; e < tg->dep_at[t + 1]; e++) ok &= tg->launch[tg->dep[e]] == 1 && tg->block[tg->dep[e]] >= 8;
        }
        CHECK(ok && tg->n_exact == tg->n_deps);
        CHECK_MSG(op_taskgraph_check(p, tg, &ctx) == MG_OK, "%s", ctx.msg);
        int t = tg->first[2]; /* without its last wait (on Y's block 15) the check finds the hole */
        tg->dep_at[t + 1]--;
        CHECK(op_taskgraph_check(p, tg, &ctx) == MG_ERR_INVALID && strstr(ctx.msg, "write only"));
        tg->dep_at[t + 1]++;
    } else CHECK_MSG(0, "the slice's plan: %d launches", tg ? tg->n_launches : -1);
    op_taskgraph_free(tg), op_plan_free(p), ir_graph_free(u), ir_graph_free(g);
    /* the small decode step: views, concat and other kernel-level operators */
    FILE *f = fopen("tests/programs/good/decode_small.mu", "rb");
    char *src = calloc(1, 1 << 16);
    if (f && src) src[fread(src, 1, (1 << 16) - 1, f)] = 0;
    if (f) fclose(f);
    p = src ? plan_lowered(src, &g, &u) : NULL;
    tg = NULL;
    CHECK(p && op_taskgraph_new(p, &ctx, &tg) == MG_OK);
    if (tg) {
        CHECK_MSG(op_taskgraph_check(p, tg, &ctx) == MG_OK, "%s", ctx.msg);
        int whole = -1; /* a task of a kernel-level operator that waits for something */
        for (int t = 0; t < tg->n_tasks && whole < 0; t++)
            if (p->g->nodes[tg->node[tg->launch[t]]].op != IR_OP_KERNEL && tg->dep_at[t + 1] > tg->dep_at[t]) whole = t;
        CHECK(whole >= 0 && tg->n_exact < tg->n_deps);
        if (whole >= 0) {
            tg->dep_at[whole + 1]--; /* drop its last dependency: the counts after it shift, which is fine here */
            CHECK(op_taskgraph_check(p, tg, &ctx) == MG_ERR_INVALID && strstr(ctx.msg, "does not wait for"));
            tg->dep_at[whole + 1]++;
        }
    }
    op_taskgraph_free(tg), op_plan_free(p), ir_graph_free(u), ir_graph_free(g);
    op_opts st = op_opts_default;
    st.persist = 2;
    p = src ? plan_lowered_with(src, &g, &u, &st) : NULL;
    tg = NULL;
    cg_program cg;
    CHECK(p && p->fused && op_taskgraph_new(p, &ctx, &tg) == MG_OK);
    if (tg && cg_emit(p, &ctx, CG_CUDA, &cg) == MG_OK) {
        char want[128];
        int ops = 0, wholes = 0;
        for (int L = 0; L < tg->n_launches; L++) ops += p->g->nodes[tg->node[L]].op == IR_OP_CONCAT;
        for (int t = 0; t < tg->n_tasks; t++)
            for (int64_t e = tg->dep_at[t]; e < tg->dep_at[t + 1]; e++) {
                int L = tg->launch[tg->dep[e]], n = tg->first[L + 1] - tg->first[L];
                if (n > 1 && tg->dep[e] == tg->first[L] && e + n <= tg->dep_at[t + 1] && tg->dep[e + n - 1] == tg->first[L + 1] - 1)
                    wholes++, e += n - 1;
            }
        int64_t entries = -1;
        const char *at = strstr(cg.src, "dependencies (opt/taskgraph.c): ");
        if (at && strstr(at, "tasks, ")) entries = atoll(strstr(at, "tasks, ") + 7);
        CHECK_MSG(cg.n_launches == 1 && cg.launches[0].packed && cg.launches[0].coresident && ops == 4 && wholes > 0, "%d ops, %d whole", ops, wholes);
        int64_t whole_tasks = 0; /* the dependencies those entries stand for */
        for (int t = 0; t < tg->n_tasks; t++)
            for (int64_t e = tg->dep_at[t]; e < tg->dep_at[t + 1]; e++) {
                int L = tg->launch[tg->dep[e]], n = tg->first[L + 1] - tg->first[L];
                if (n > 1 && tg->dep[e] == tg->first[L] && e + n <= tg->dep_at[t + 1] && tg->dep[e + n - 1] == tg->first[L + 1] - 1)
                    whole_tasks += n, e += n - 1;
            }
        CHECK_MSG(entries == tg->n_deps - whole_tasks + wholes, "%lld entries, %lld deps", (long long)entries, (long long)tg->n_deps);
        int cat = 0; /* the first concat's element-loop tasks */
        while (cat < tg->n_launches && p->g->nodes[tg->node[cat]].op != IR_OP_CONCAT) cat++;
        if (cat < tg->n_launches)
            snprintf(want, sizeof want, "kernel-level operator, %d tasks */", tg->first[cat + 1] - tg->first[cat]);
        CHECK(cat < tg->n_launches && strstr(cg.src, want) && strstr(cg.src, "= concat (node ") && strstr(cg.src, "const int tn_ = "));
        cg_program_free(&cg);
    } else CHECK_MSG(0, "%s", ctx.msg);
    free(src);
    op_taskgraph_free(tg), op_plan_free(p), ir_graph_free(u), ir_graph_free(g);
}

/* A C model of the persistent launch's protocol (cuda/lib/task.cuh, codegen/cuda/launch.c),
 * run under many random interleavings: B blocks, of which R are resident at once (the rest
 * start as resident ones leave); a block takes the next ticket, leaves when tickets are out,
 * else waits until every dependency's done flag is set, runs the task and sets its flag. Each
 * step of the model is one of those actions by a block the random scheduler picks among those
 * that can move. Checked: no state where no block can move before all tasks ran (no deadlock
 * at any residency), every task runs once and after all its dependencies, and the last block
 * to leave finds every flag set (so zeroing them is safe).
 * The watchdog: task `stall` (-1: none) runs but never sets its flag; a block that has waited
 * more than `limit` steps may give up: the first records its task and the unset flag, the
 * ticket counter jumps past the tasks, and every block then leaves at its next ticket or wait.
 * Then checked instead: every block leaves, the record names a waiting task and an unset flag
 * it waits for, no task ran before its dependencies, and some task was never run. *rec: the
 * record (task, flag), -1 when nobody gave up. stat: the static schedule instead of tickets
 * (block b runs tasks b, b + B, b + 2B, ...; needs every block resident). */
typedef struct proto_graph {
    int n;
    const int64_t *at;
    const int *dep;
} proto_graph;

static int proto_watch(const proto_graph *g, int blocks, int resident, rng *r, int stall, int limit, int rec[2], int stat) {
    int *flag = calloc((size_t)g->n + 1, sizeof(int)), *task = calloc((size_t)blocks, sizeof(int));
    int *state = calloc((size_t)blocks, sizeof(int)); /* 0 not started, 1 needs a ticket, 2 waits, 3 left */
    int *since = calloc((size_t)blocks, sizeof(int)); /* the step its wait began */
    int *nxt = calloc((size_t)blocks, sizeof(int));   /* static: its next task */
    for (int b = 0; b < blocks; b++) nxt[b] = b;
    int ticket = 0, started = 0, running = 0, left = 0, ran = 0, ok = 1, gave_up = 0, step = 0;
    int *can = calloc((size_t)blocks, sizeof(int));
    rec[0] = rec[1] = -1;
    while (ok && left < blocks) {
        step++;
        while (running < resident && started < blocks) state[started++] = 1, running++;
        int nc = 0;
        for (int b = 0; b < blocks; b++) {
            if (state[b] == 1) can[nc++] = b;
            else if (state[b] == 2) {
                int ready = 1;
                for (int64_t e = g->at[task[b]]; e < g->at[task[b] + 1] && ready; e++) ready = flag[g->dep[e]];
                if (ready || gave_up || step - since[b] > limit) can[nc++] = b;
            }
        }
        if (!nc && limit < 1 << 30) { /* only waits left: time passes until the watchdog's limit */
            step += limit;
            continue;
        }
        if (!nc) { /* nobody can move: a deadlock */
            ok = 0;
            break;
        }
        int b = can[rng_below(r, (uint64_t)nc)];
        if (state[b] == 1) {
            int next = stat ? nxt[b] : ticket;
            if (next >= g->n || (stat && gave_up)) { /* leave */
                state[b] = 3, running--, left++;
                if (left == blocks && !gave_up)
                    for (int t = 0; t < g->n; t++) ok &= flag[t] == 1 || t == stall;
            } else task[b] = next, ticket += !stat, nxt[b] += blocks, state[b] = 2, since[b] = step;
            continue;
        }
        int unset = -1;
        for (int64_t e = g->at[task[b]]; e < g->at[task[b] + 1] && unset < 0; e++)
            if (!flag[g->dep[e]]) unset = g->dep[e];
        if (unset >= 0 || gave_up) { /* gives up (or sees that another did): leaves */
            if (!gave_up) rec[0] = task[b], rec[1] = unset, ticket += 1 << 30, gave_up = 1;
            state[b] = 3, running--, left++;
            continue;
        }
        for (int64_t e = g->at[task[b]]; e < g->at[task[b] + 1]; e++) ok &= flag[g->dep[e]] == 1 && g->dep[e] < task[b];
        ok &= flag[task[b]] == 0;
        flag[task[b]] = task[b] != stall, ran++, state[b] = 1;
    }
    ok &= gave_up ? ran < g->n && rec[1] >= 0 && !flag[rec[1]] : ran == g->n;
    if (gave_up) { /* the recorded task does wait for the recorded flag */
        int dep_ok = 0;
        for (int64_t e = g->at[rec[0]]; e < g->at[rec[0] + 1]; e++) dep_ok |= g->dep[e] == rec[1];
        ok &= dep_ok;
    }
    free(flag), free(task), free(state), free(since), free(nxt), free(can);
    return ok;
}

static int proto_run(const proto_graph *g, int blocks, int resident, rng *r) {
    int rec[2];
    return proto_watch(g, blocks, resident, r, -1, 1 << 30, rec, 0) && rec[0] < 0;
}

/* The third schedule's protocol (queue.cuh): a scheduler reading the ready list B at a time
 * and W workers with queues of Q = 4. A worker finishing task k sets its flag, then for each
 * task waiting for k counts one more entry met, the last one appending it to the ready list
 * in two steps (the slot, then the number: the scheduler may find a gap); a scheduler round
 * is four steps (read the ready list's next B, read the tails, hand the ready prefix out,
 * publish the heads), so workers move between them as on the GPU. Checks: a worker only ever
 * runs a task whose dependencies are done, each task once, every block leaves; with task
 * `stall` never finishing, the watchdog (limit rounds handing nothing) records the smallest
 * task not ready and a dependency of it not done, and everyone leaves. */
static int queue_model(const proto_graph *g, int B, int W, rng *r, int stall, int limit, int rec[2]) {
    enum { Q = 4 };
    long steps = 0;
    int n = g->n, ok = 1, ran = 0, left = 0, abort_ = 0, rr = 0, phase = 0, idle = 0, given = 0, sched_left = 0;
    int rc = 0, R = 0, rtail = 0, stopping = 0;
    int *flag = calloc((size_t)n + 1, sizeof(int)), *got = calloc((size_t)n + 1, sizeof(int));
    int *ready = calloc((size_t)n + 1, sizeof(int)), *sa = calloc((size_t)n + 2, sizeof(int));
    int *sv = calloc((size_t)g->at[n] + 1, sizeof(int));
    int *head = calloc((size_t)W, sizeof(int)), *tail = calloc((size_t)W, sizeof(int)), *hl = calloc((size_t)W, sizeof(int));
    int *ring = calloc((size_t)W * Q, sizeof(int)), *run = calloc((size_t)W, sizeof(int)), *gone = calloc((size_t)W, sizeof(int));
    int *elig = calloc((size_t)W, sizeof(int)), *stopped = calloc((size_t)W, sizeof(int));
    int *todo = calloc((size_t)W, sizeof(int)), *next = calloc((size_t)W, sizeof(int)), *slot = calloc((size_t)W, sizeof(int));
    for (int64_t e = 0; e < g->at[n]; e++) sa[g->dep[e] + 1]++; /* successors, as codegen's succ */
    for (int i = 0; i < n; i++) sa[i + 1] += sa[i];
    int *fill = calloc((size_t)n + 1, sizeof(int));
    for (int t = 0; t < n; t++)
        for (int64_t e = g->at[t]; e < g->at[t + 1]; e++) sv[sa[g->dep[e]] + fill[g->dep[e]]++] = t;
    free(fill);
    for (int t = 0; t < n; t++) /* the tasks waiting for nothing: the scheduler's first */
        if (g->at[t] == g->at[t + 1]) ready[rtail++] = t + 1;
    for (int w = 0; w < W; w++) run[w] = -1, slot[w] = -1;
    rec[0] = rec[1] = -1;
    while (ok && left < W + 1) {
        if (++steps > 20000000) ok = 0; /* nobody getting anywhere: a hang */
        int who = (int)rng_below(r, (uint64_t)W + 1); /* W: the scheduler */
        if (who < W) {
            int w = who;
            if (gone[w]) continue;
            if (slot[w] >= 0) { /* the number into the slot it took */
                ready[slot[w]] = todo[w] + 1, slot[w] = -1;
            } else if (run[w] >= 0 && next[w] < 0) { /* runs its task */
                int k = run[w];
                for (int64_t e = g->at[k]; e < g->at[k + 1]; e++) ok &= flag[g->dep[e]] == 1;
                ok &= flag[k] == 0;
                ran++;
                if (k == stall) run[w] = -1; /* never finishes: no flag, no successors */
                else flag[k] = 1, next[w] = sa[k];
            } else if (run[w] >= 0) { /* its successors, one a step */
                int k = run[w];
                if (next[w] == sa[k + 1]) run[w] = -1, next[w] = -1;
                else {
                    int s = sv[next[w]++];
                    if (++got[s] == g->at[s + 1] - g->at[s]) slot[w] = rtail++, todo[w] = s;
                }
            } else if (head[w] != tail[w]) {
                int e = ring[w * Q + tail[w] % Q];
                tail[w]++;
                if (e < 0) gone[w] = 1, left++;
                else run[w] = e, next[w] = -1;
            } else if (abort_) gone[w] = 1, left++;
            continue;
        }
        if (sched_left) continue;
        if (stopping) { /* a -1 to each worker with room */
            int all = 1;
            for (int w = 0; w < W; w++) {
                if (stopped[w] || hl[w] - tail[w] >= Q) {
                    all &= stopped[w];
                    continue;
                }
                ring[w * Q + hl[w] % Q] = -1, hl[w]++, head[w] = hl[w], stopped[w] = 1;
            }
            if (all) sched_left = 1, left++;
        } else if (phase == 0) { /* the ready list's next B: its prefix up to a gap */
            R = 0;
            while (R < B && rc + R < n && ready[rc + R]) R++;
            phase = 1;
        } else if (phase == 1) { /* the tails: empty queues first, then those with room */
            int ne = 0, a = 0;
            for (int j = 0; j < W; j++) ne += hl[(rr + j) % W] == tail[(rr + j) % W];
            int b = ne;
            for (int j = 0; j < W; j++) {
                int w = (rr + j) % W, d = hl[w] - tail[w];
                if (d == 0) elig[a++] = w;
                else if (d < Q) elig[b++] = w;
            }
            given = R < b ? R : b;
            phase = 2;
        } else if (phase == 2) { /* the ready prefix, one a worker */
            for (int k = 0; k < given; k++) {
                int w = elig[k];
                ring[w * Q + hl[w] % Q] = ready[rc + k] - 1, hl[w]++;
            }
            phase = 3;
        } else { /* publish; then done, or the watchdog */
            for (int k = 0; k < given; k++) head[elig[k]] = hl[elig[k]];
            rr = W ? (rr + given) % W : 0, rc += given;
            idle = given ? 0 : idle + 1;
            phase = 0;
            if (rc == n) stopping = 1;
            else if (idle > limit) { /* gives up: the smallest task not ready, a dependency not done */
                int t = 0;
                while (t < n && got[t] == g->at[t + 1] - g->at[t]) t++;
                rec[0] = t;
                for (int64_t e = g->at[t]; e < g->at[t + 1] && rec[1] < 0; e++)
                    if (!flag[g->dep[e]]) rec[1] = g->dep[e];
                abort_ = 1, sched_left = 1, left++;
            }
        }
    }
    ok &= abort_ ? rec[0] >= 0 && rec[0] < n && rec[1] >= 0 && !flag[rec[1]] : ran == n;
    if (abort_ && rec[0] >= 0 && rec[0] < n) {
        int dep_ok = 0;
        for (int64_t e = g->at[rec[0]]; e < g->at[rec[0] + 1]; e++) dep_ok |= g->dep[e] == rec[1];
        ok &= dep_ok;
    }
    free(flag), free(got), free(ready), free(sa), free(sv), free(head), free(tail), free(hl), free(ring), free(run);
    free(gone), free(elig), free(stopped), free(todo), free(next), free(slot);
    return ok;
}

void test_task_protocol(void) {
    rng r = {2026};
    /* the task graphs of the lowered GQA b=1 and the small decode step */
    const char *progs[] = {"examples/gqa_b1.mu", "tests/programs/good/decode_small.mu"};
    for (int q = 0; q < 2; q++) {
        FILE *f = fopen(progs[q], "rb");
        char *src = calloc(1, 1 << 16);
        if (f && src) src[fread(src, 1, (1 << 16) - 1, f)] = 0;
        if (f) fclose(f);
        ir_graph *g, *u;
        op_plan *p = src ? plan_lowered(src, &g, &u) : NULL;
        op_taskgraph *tg = NULL;
        mg_ctx ctx = {{0}};
        CHECK(p && op_taskgraph_new(p, &ctx, &tg) == MG_OK);
        if (tg) {
            proto_graph pg = {tg->n_tasks, tg->dep_at, tg->dep};
            static const int res[] = {1, 2, 7, 132};
            for (int k = 0; k < 4; k++)
                for (int rep = 0; rep < 5; rep++) CHECK_MSG(proto_run(&pg, 150, res[k], &r), "%s, %d resident", progs[q], res[k]);
            /* the scheduler and queues: 128 threads, 131 workers; task 0 stalled is found by
             * the smallest task not ready, which waits for it */
            int rec[2];
            CHECK_MSG(queue_model(&pg, 128, 131, &r, -1, 1 << 30, rec) && rec[0] < 0, "%s, queues", progs[q]);
            CHECK_MSG(queue_model(&pg, 128, 131, &r, 0, 200, rec) && rec[0] >= tg->first[1] && rec[1] == 0,
                      "%s, queues, task 0 stalled: record %d waits for %d", progs[q], rec[0], rec[1]);
        }
        free(src);
        op_taskgraph_free(tg), op_plan_free(p), ir_graph_free(u), ir_graph_free(g);
    }
    /* random task graphs: 200 tasks, each waiting for up to 6 random earlier ones */
    for (int trial = 0; trial < 200; trial++) {
        int n = 1 + (int)rng_below(&r, 200), m = 0;
        int64_t *at = malloc(((size_t)n + 1) * sizeof *at);
        int *dep = malloc((size_t)n * 6 * sizeof *dep);
        for (int t = 0; t < n; t++) {
            at[t] = m;
            int k = t ? (int)rng_below(&r, 7) : 0, last = -1;
            for (int j = 0; j < k; j++) { /* increasing, distinct, earlier */
                int lo = last + 1;
                if (lo >= t) break;
                last = lo + (int)rng_below(&r, (uint64_t)(t - lo < 4 ? t - lo : 4));
                dep[m++] = last;
            }
        }
        at[n] = m;
        proto_graph pg = {n, at, dep};
        int blocks = 1 + (int)rng_below(&r, 40), resident = 1 + (int)rng_below(&r, (uint64_t)blocks);
        CHECK_MSG(proto_run(&pg, blocks, resident, &r), "trial %d: %d tasks, %d blocks, %d resident", trial, n, blocks, resident);
        free(at), free(dep);
    }
    /* the watchdog: on the GQA-shaped graph below (4 heads, 8 splits each, then a combine a
     * head), the first split of head 0 never finishing is found by a combine of head 0, and
     * everything leaves, at every residency; without the stall it never fires */
    {
        enum { H = 4, S = 8 };
        int64_t at3[H * S + H + 1];
        int dep3[H * S];
        for (int t = 0; t <= H * S; t++) at3[t] = 0;
        for (int h = 0; h < H; h++) {
            for (int j = 0; j < S; j++) dep3[h * S + j] = h * S + j;
            at3[H * S + h + 1] = (h + 1) * S;
        }
        proto_graph gq = {H * S + H, at3, dep3};
        static const int res[] = {1, 3, 36};
        for (int k = 0; k < 3; k++)
            for (int rep = 0; rep < 20; rep++) {
                int rec[2];
                CHECK_MSG(proto_watch(&gq, 36, res[k], &r, 0, 50, rec, 0) && rec[0] == H * S && rec[1] == 0,
                          "%d resident: record %d waits for %d", res[k], rec[0], rec[1]);
                CHECK(proto_watch(&gq, 36, res[k], &r, -1, 1 << 30, rec, 0) && rec[0] < 0);
            }
    }
    /* the static schedule (--megakernel) and the scheduler with queues (--queues) on the
     * random graphs: never stuck with every block resident, the watchdog's record right when
     * a task stalls; the static schedule with fewer resident
     * than the schedule's blocks it can deadlock (why the runtime launches only as many as
     * fit): block 0 holds tasks 0 and 2, block 1 task 1, which waits for task 2 */
    for (int trial = 0; trial < 200; trial++) {
        int n = 1 + (int)rng_below(&r, 120), m = 0;
        int64_t *at = malloc(((size_t)n + 1) * sizeof *at);
        int *dep = malloc((size_t)n * 4 * sizeof *dep);
        for (int t = 0; t < n; t++) {
            at[t] = m;
            for (int j = 0; j < 4 && t; j++) {
                int d = (int)rng_below(&r, (uint64_t)t);
                int dup = 0;
                for (int64_t e = at[t]; e < m; e++) dup |= dep[e] == d;
                if (!dup) dep[m++] = d;
            }
            for (int64_t e = at[t] + 1; e < m; e++) /* sorted */
                for (int64_t f = e; f > at[t] && dep[f] < dep[f - 1]; f--) {
                    int x = dep[f];
                    dep[f] = dep[f - 1], dep[f - 1] = x;
                }
        }
        at[n] = m;
        proto_graph pg = {n, at, dep};
        int blocks = 1 + (int)rng_below(&r, 40), rec[2];
        CHECK_MSG(proto_watch(&pg, blocks, blocks, &r, -1, 1 << 30, rec, 1) && rec[0] < 0, "static trial %d", trial);
        int stall = (int)rng_below(&r, (uint64_t)n);
        CHECK_MSG(proto_watch(&pg, blocks, blocks, &r, stall, 30, rec, 1), "static trial %d, task %d stalled", trial, stall);
        /* the scheduler and queues (--queues): 1 to 8 scheduler threads, 1 to 12 workers */
        int B = 1 + (int)rng_below(&r, 8), W = 1 + (int)rng_below(&r, 12);
        CHECK_MSG(queue_model(&pg, B, W, &r, -1, 1 << 30, rec) && rec[0] < 0, "queues trial %d: %d threads, %d workers", trial,
                  B, W);
        CHECK_MSG(queue_model(&pg, B, W, &r, stall, 40, rec), "queues trial %d, task %d stalled", trial, stall);
        free(at), free(dep);
    }
    {
        int64_t at5[4] = {0, 0, 0, 1};
        int dep5[1] = {1}, rec[2];
        proto_graph g5 = {3, at5, dep5}; /* task 2 waits for task 1 */
        CHECK(proto_watch(&g5, 2, 2, &r, -1, 1 << 30, rec, 1));  /* static, both resident */
        CHECK(!proto_watch(&g5, 2, 1, &r, -1, 1 << 30, rec, 1)); /* static, one: stuck */
        CHECK(proto_watch(&g5, 2, 1, &r, -1, 1 << 30, rec, 0));  /* tickets, one: fine */
    }
    /* the model can fail: a task waiting for a later one deadlocks with one resident block */
    int64_t at2[3] = {0, 1, 1};
    int dep2[1] = {1};
    proto_graph bad = {2, at2, dep2};
    CHECK(!proto_run(&bad, 1, 1, &r));
}

/* The schedule space (opt/space.c, docs/tuning.md). On μGraphs and a lowered program: the
 * rules' own point is valid and plans exactly as the rules do (each kernel's threads, stages,
 * shared memory, TMA and blocks an SM); the valid points counted kernel by kernel equal those
 * found by checking every distinct point where the space is small; and each per-choice
 * constraint rejects the point that breaks it: a TMA loop of one stage, more stages than
 * iterations, two blocks an SM whose stages do not fit in half the shared memory; and a
 * random valid point's text reads back as the same point. */
void test_space(void) {
    const char *files[] = {"gqa_b1", "rmsnorm_linear_b8", "lora", "examples/ugraphs/gated_mlp.mu", "bench/suite/bias_relu.mu",
                           "bench/suite/bmm_scale_add.mu", "bench/suite/mlp_relu.mu"};
    const mg_device *dev = mg_device_default();
    int trip_seen = 0, smem_seen = 0, stages_seen = 0;
    for (int fi = 0; fi < (int)(sizeof files / sizeof *files); fi++) {
        mg_ctx ctx = {{0}};
        ir_graph *g = load_ugraph(files[fi]), *u = NULL;
        const ir_graph *h = g;
        if (fi >= 4) { /* a program: its lowering */
            CHECK_MSG(lw_lower(g, &ctx, dev, 0, NULL, &u, NULL) == MG_OK, "%s", ctx.msg);
            h = u;
        }
        op_space *s = calloc(1, sizeof *s);
        op_plan *p = NULL, *q = NULL;
        CHECK_MSG(h && s && op_space_new(h, &ctx, dev, &op_opts_default, s) == MG_OK, "%s: %s", files[fi], ctx.msg);
        CHECK(op_plan_new(h, &ctx, dev, &op_opts_default, &p) == MG_OK);
        int x[OP_SPACE_MAX];
        for (int i = 0; i < s->n; i++) x[i] = s->p[i].def;
        CHECK_MSG(op_space_check(h, dev, &op_opts_default, s, x) == 0, "%s: the rules' point", files[fi]);
        op_force f[OP_SPACE_KERNELS];
        op_opts o = op_space_opts(s, x, &op_opts_default, f);
        CHECK(op_plan_new(h, &ctx, dev, &o, &q) == MG_OK);
        if (p && q) {
            CHECK(p->n_kernels == q->n_kernels && p->n_kernels == s->n_kernels);
            for (int k = 0; k < p->n_kernels && k < q->n_kernels; k++) {
                const op_kernel *a = &p->kernels[k], *b = &q->kernels[k];
                CHECK_MSG(a->threads == b->threads && a->stages == b->stages && a->smem == b->smem && a->tma == b->tma &&
                              a->min_blocks == b->min_blocks && a->n_barriers == b->n_barriers,
                          "%s kernel %d: rules %d threads %d stages %lld B tma %d x%d, forced %d %d %lld %d x%d", files[fi], k,
                          a->threads, a->stages, (long long)a->smem, a->tma, a->min_blocks, b->threads, b->stages,
                          (long long)b->smem, b->tma, b->min_blocks);
            }
        }
        /* counted kernel by kernel against every distinct point checked whole */
        double raw = 1;
        for (int i = 0; i < s->n; i++) raw *= s->p[i].n;
        if (raw <= 4096) {
            double distinct = 0, valid = 0;
            for (int t = 0; t < (int)raw; t++) {
                int qd = t, dup = 0;
                for (int i = 0; i < s->n; i++) x[i] = qd % s->p[i].n, qd /= s->p[i].n;
                for (int i = 0; i < s->n; i++) { /* threads under TMA, blocks an SM without: moot */
                    int tma = 0;
                    for (int j = 0; j < s->n; j++)
                        if (s->p[j].kind == OP_P_TMA && s->p[j].kernel == s->p[i].kernel) tma = s->p[j].val[x[j]];
                    if ((s->p[i].kind == OP_P_THREADS && tma) || (s->p[i].kind == OP_P_PAIR && !tma)) dup |= x[i] != s->p[i].def;
                }
                if (dup) continue;
                distinct++;
                valid += op_space_check(h, dev, &op_opts_default, s, x) == 0;
            }
            CHECK_MSG(distinct == op_space_count(h, dev, &op_opts_default, s, 0) &&
                          valid == op_space_count(h, dev, &op_opts_default, s, 1) && valid > 0 && valid <= distinct,
                      "%s: %g of %g valid, counted %g of %g", files[fi], valid, distinct,
                      op_space_count(h, dev, &op_opts_default, s, 1), op_space_count(h, dev, &op_opts_default, s, 0));
        }
        /* random valid points: their text (op_space_format, the tuner's dataset) reads back
         * as the same point (op_space_parse, --schedule) */
        rng r = {(uint64_t)fi + 1};
        for (int t = 0; t < 20; t++) {
            int y[OP_SPACE_MAX], z[OP_SPACE_MAX];
            char spec[1024];
            if (op_space_draw(h, dev, &op_opts_default, s, &r, y)) continue;
            CHECK(op_space_format(s, y, spec, sizeof spec) > 0);
            CHECK_MSG(op_space_parse(s, spec, &ctx, z) == MG_OK && !memcmp(y, z, (size_t)s->n * sizeof *y) &&
                          op_space_check(h, dev, &op_opts_default, s, z) == 0, "%s: '%s': %s", files[fi], spec, ctx.msg);
        }
        /* each kernel's choices pushed past a limit */
        for (int i = 0; i < s->n; i++) {
            for (int j = 0; j < s->n; j++) x[j] = s->p[j].def;
            const op_param *pp = &s->p[i];
            if (pp->kind != OP_P_STAGES || !p) continue;
            const op_kernel *kk = &p->kernels[pp->kernel];
            if (kk->body->forloop < 6) { /* 6 stages of a shorter loop */
                x[i] = 5;
                CHECK(op_space_check(h, dev, &op_opts_default, s, x) >> OP_C_TRIP & 1);
                trip_seen++;
            }
            if (kk->tma) { /* a TMA loop of one stage */
                x[i] = 0;
                CHECK(op_space_check(h, dev, &op_opts_default, s, x) >> OP_C_STAGES & 1);
                stages_seen++;
                x[i] = pp->def;
                for (int j = 0; j < s->n; j++) /* two blocks an SM with the stages of one */
                    if (s->p[j].kind == OP_P_PAIR && s->p[j].kernel == pp->kernel && kk->min_blocks == 1 &&
                        kk->smem > (dev->smem_per_block + 1024) / 2 - 1024) {
                        x[j] = 1;
                        CHECK(op_space_check(h, dev, &op_opts_default, s, x) >> OP_C_SMEM & 1);
                        smem_seen++;
                    }
            }
        }
        op_plan_free(p), op_plan_free(q), free(s), ir_graph_free(u), ir_graph_free(g);
    }
    CHECK_MSG(trip_seen && stages_seen && smem_seen, "constraints exercised: trip %d, stages %d, smem %d", trip_seen,
              stages_seen, smem_seen);
}

/* How many launches of a copy of cg's keep a row axis after cg_mark_rows at capacity 256. */
static int marked_rows(const cg_program *cg, const unsigned char *varies, const int64_t *k) {
    cg_program c2 = *cg;
    cg_launch *copy = base_alloc(((size_t)cg->n_launches + 1) * sizeof *copy);
    int n = 0;
    CHECK(copy);
    if (!copy) return -1;
    memcpy(copy, cg->launches, (size_t)cg->n_launches * sizeof *copy);
    c2.launches = copy;
    cg_mark_rows(&c2, varies, 256, k, 1);
    for (int l = 0; l < c2.n_launches; l++) n += c2.launches[l].row_axis >= 0;
    base_free(copy);
    return n;
}

/* Run-time grids (docs/tuning.md "Run-time grids", cg_mark_rows, cg_row_grid): the variant
 * for 256 rows of X; V's column norms read only the weights, so it keeps its whole grid; the launches
 * over X's rows have a row axis whose blocks are cut, for a call of b rows, to exactly those
 * whose first row lies within the first b * rows / 256 rows (counted block by block here). */
void test_row_grids(void) {
    static const char src[] = "input X : f16[256, 512]\ninput W : f16[512, 384]\nV = W / sqrt(sum(sqr(W), dim=0))\n"
                              "O = matmul(X / sqrt(sum(sqr(X), dim=1) / 512), V)\noutput O\n";
    ir_graph *g, *u;
    op_plan *p = plan_lowered(src, &g, &u);
    cg_program cg = {0};
    mg_ctx ctx = {{0}};
    CHECK_MSG(p && cg_emit(p, &ctx, CG_CUDA, &cg) == MG_OK, "%s", ctx.msg);
    unsigned char none[2] = {0, 0}, x_rows[2] = {0, 0};
    int xi = -1; /* X's place among the lowered program's inputs */
    for (int i = 0, ni = 0; u && i < u->n_nodes; i++)
        if (u->nodes[i].op == IR_OP_INPUT) xi = u->nodes[i].name && !strcmp(u->nodes[i].name, "X") ? ni : xi, ni++;
    CHECK(xi >= 0 && xi < 2 && cg.n_in == 2);
    if (xi >= 0 && xi < 2) x_rows[xi] = 1;
    int cut = 0, whole = 0;
    static const int64_t one[] = {1}, two[] = {2};
    /* no input holds the rows, or X's rows are not K = 2 per B: nothing is cut */
    CHECK(marked_rows(&cg, none, one) == 0 && marked_rows(&cg, x_rows, two) == 0);
    if (cg.n_launches) cg_mark_rows(&cg, x_rows, 256, one, 1);
    for (int l = 0; l < cg.n_launches; l++) {
        const cg_launch *L = &cg.launches[l];
        int reads_x = 0, reads_w = 0;
        for (int a = L->n_out; xi >= 0 && a < L->n_args; a++)
            reads_x |= L->args[a] == cg.in_buf[xi], reads_w |= L->args[a] == cg.in_buf[1 - xi];
        if (reads_w && !reads_x) { /* the weights' kernel: V's norms */
            whole++;
            CHECK_MSG(L->row_axis < 0, "%s: the weights' kernel has a row axis", L->name);
        }
        static const int64_t bs[] = {1, 2, 37, 100, 255, 256};
        for (int k = 0; k < 6; k++) {
            unsigned gr[3];
            cg_row_grid(L, bs[k], 256, gr);
            unsigned want = L->grid[L->row_axis < 0 ? 0 : L->row_axis];
            if (L->row_axis >= 0) {
                int64_t per = L->row_rows / L->grid[L->row_axis], need = bs[k] * (L->row_rows / 256);
                want = 0;
                for (unsigned i = 0; i < L->grid[L->row_axis]; i++) want += (int64_t)i * per < need;
            }
            int x = L->row_axis < 0 ? 0 : L->row_axis;
            CHECK_MSG(gr[x] == want && gr[(x + 1) % 3] == L->grid[(x + 1) % 3] && gr[(x + 2) % 3] == L->grid[(x + 2) % 3],
                      "%s b = %lld: axis %d grid %u, want %u", L->name, (long long)bs[k], L->row_axis, gr[x], want);
            cut += L->row_axis >= 0 && bs[k] == 1 && gr[x] < L->grid[x];
        }
    }
    CHECK_MSG(cut >= 1, "no launch over X's rows was cut at b = 1 (%d launches)", cg.n_launches);
    CHECK_MSG(whole >= 1, "no launch kept its whole grid (%d launches)", cg.n_launches);
    cg_program_free(&cg);
    op_plan_free(p);
    ir_graph_free(u), ir_graph_free(g);
    /* a product over 4 rows splits its depth in 4 (split-K partials [4 splits, 4, N], then their
     * sum): the partials' dim 0 is the split, as many as the capacity's rows, and their launch
     * keeps its grid (its blocks split X's columns); a call of 3 rows cut it to 3 of the 4
     * splits (H200, session 32: every output NaN) */
    static const char src4[] = "input X : f16[4, 4096]\ninput W : f16[4096, 6144]\nO = matmul(X, W)\noutput O\n";
    p = plan_lowered(src4, &g, &u);
    memset(&cg, 0, sizeof cg);
    CHECK_MSG(p && cg_emit(p, &ctx, CG_CUDA, &cg) == MG_OK, "%s", ctx.msg);
    unsigned char xr[2] = {1, 0};
    int split = 0;
    for (int i = 0, ni = 0; u && i < u->n_nodes; i++)
        if (u->nodes[i].op == IR_OP_INPUT) xr[ni] = u->nodes[i].name && !strcmp(u->nodes[i].name, "X"), ni++;
    if (cg.n_launches) cg_mark_rows(&cg, xr, 4, one, 1);
    for (int l = 0; l < cg.n_launches; l++) {
        const cg_launch *L = &cg.launches[l];
        split |= L->grid[1] == 4;
        unsigned gr[3];
        cg_row_grid(L, 3, 4, gr);
        CHECK_MSG(L->grid[1] != 4 || (gr[0] == L->grid[0] && gr[1] == L->grid[1]),
                  "%s: the split-K partials' launch cut to %u x %u of %u x %u", L->name, gr[0], gr[1], L->grid[0], L->grid[1]);
    }
    CHECK_MSG(split, "no split-K launch over 4 rows (%d launches): the test no longer covers it", cg.n_launches);
    cg_program_free(&cg);
    op_plan_free(p);
    ir_graph_free(u), ir_graph_free(g);
}
