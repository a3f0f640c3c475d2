/* codegen/params: kernel parameters (the device buffers a kernel reads and writes, with C
 * names), kernel heads, and the launch records the runtime replays (cg_program.launches). */
#include <stdio.h>
#include <string.h>

#include "cg_internal.h"

/* C identifiers: prefix + the node's name with anything but [A-Za-z0-9_] made '_', or t<i>.
 * Names are unique in a graph, and sanitising can only merge names that differ in such
 * characters, so the node index is appended when that happens. */
const char **cg_names(const ir_graph *g, arena *a, const char *prefix) {
    const char **out = arena_alloc(a, (size_t)g->n_nodes * sizeof *out + 1);
    if (!out) return NULL;
    for (int i = 0; i < g->n_nodes; i++) {
        char buf[96];
        const char *nm = g->nodes[i].name;
        int clean = nm != NULL;
        if (nm) {
            snprintf(buf, sizeof buf, "%s%s", prefix, nm);
            for (char *q = buf; *q; q++)
                if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') || *q == '_'))
                    *q = '_', clean = 0;
            if (!clean) snprintf(buf + strlen(buf) > buf + 80 ? buf + 80 : buf + strlen(buf), 16, "_%d", i);
        } else snprintf(buf, sizeof buf, "%st%d", prefix, i);
        out[i] = arena_strdup(a, buf);
        if (!out[i]) return NULL;
    }
    return out;
}

/* ---- kernel parameters ---- */

void cg_add_param(params *ps, int node) {
    for (int i = 0; i < ps->n; i++)
        if (ps->node[i] == node) return;
    if (ps->n < CG_MAX_ARGS) ps->node[ps->n++] = node;
}

/* the stored kernel-graph nodes that node j's expression reads (through inlined operators) */
void cg_collect_inputs(const op_plan *p, int j, params *ps) {
    const ir_node *n = &p->g->nodes[j];
    for (int a = 0; a < n->n_in; a++) {
        int x = n->in[a];
        if (p->buf[x] >= 0) cg_add_param(ps, x);
        else cg_collect_inputs(p, x, ps);
    }
}

/* Parameter list of ps, without the parentheses: outputs writable, inputs const, all
 * __restrict__ in CUDA except, with `fused`, buffers written in the launch: all but the inputs
 * (see cg_cuda_emit_fused). */
void cg_param_list(em *E, const char **gn, const params *ps, int fused) {
    for (int i = 0; i < ps->n; i++) {
        int x = ps->node[i];
        int src = E->p->view[x] >= 0 ? E->p->view[x] : x; /* fused: only inputs are never written in the launch */
        int restrict_ = E->tg == CG_CUDA && !(fused && i >= ps->n_out && E->p->g->nodes[src].op != IR_OP_INPUT);
        sb_printf(E->sb, "%s%s%s *%s%s", i ? ", " : "", i < ps->n_out ? "" : "const ", cg_ctype(E->p->store[x]),
                  restrict_ ? "__restrict__ " : "", gn[x]);
    }
}

/* The opening of a kernel. CUDA: every kernel, the program's first included, waits for its
 * predecessor's results itself (griddepcontrol.wait; a no-op when launched plainly), so the
 * runtime may launch it as a programmatic dependent: its launch then overlaps the end of the
 * kernel before it in the stream, whichever program that was (session 9: nTrans 2.9 -> 2.7,
 * LoRA 3.7 -> 3.4, GQA b=1 9.2 -> 8.8 us, notes §27). (Letting it
 * launch earlier, griddepcontrol.launch_dependents at the predecessor's start, measured
 * slower: GQA b=1 12.5 against 10.5 us.) */
void cg_signature(em *E, const char *kname, const params *ps, int nthreads, const char **gn, int after) {
    if (E->tg == CG_CUDA && E->block && E->k->min_blocks > 1) /* two blocks an SM (opt.h) */
        sb_printf(E->sb, "extern \"C\" __global__ void __launch_bounds__(%d, %d) %s(", nthreads, E->k->min_blocks, kname);
    else if (E->tg == CG_CUDA) sb_printf(E->sb, "extern \"C\" __global__ void __launch_bounds__(%d) %s(", nthreads, kname);
    else sb_printf(E->sb, "static void %s(", kname);
    cg_param_list(E, gn, ps, 0);
    if (E->tg == CG_CUDA && E->block && E->k->tma) cg_tma_params(E);
    if (E->tg == CG_CUDA && cg_masked(E)) sb_puts(E->sb, ", const long long mg_L"); /* the call's length (mask.c; C: a global) */
    sb_puts(E->sb, ") {\n");
    if (E->tg == CG_CUDA && after) sb_puts(E->sb, "    mg_grid_wait(); /* the previous kernel's results */\n");
}

void cg_record_launch(const em *E, cg_program *out, const char *kname, int node, const params *ps,
                      const unsigned grid[3], unsigned block, int64_t smem) {
    cg_launch *l = &out->launches[out->n_launches++];
    snprintf(l->name, sizeof l->name, "%s", kname);
    l->node = node, l->block = block, l->smem = smem, l->n_args = ps->n, l->n_out = ps->n_out;
    l->row_axis = -1, l->row_rows = 0; /* block.c sets it for a block kernel */
    l->len_param = E->tg == CG_CUDA && cg_masked(E);
    l->pdl = E->tg == CG_CUDA && !E->p->fused && !E->p->clustered; /* cg_signature() made it wait */
    memcpy(l->grid, grid, sizeof l->grid);
    for (int i = 0; i < ps->n; i++) l->args[i] = E->p->buf[ps->node[i]];
}

/* The kernel-graph nodes block kernel knode passes: its outputs in save order, then its inputs. */
void cg_block_params(const op_plan *p, int knode, params *ps) {
    const ir_graph *kg = p->g, *b = kg->nodes[knode].body;
    for (int q = 0; q < b->n_outputs; q++)
        for (int i = knode; i < kg->n_nodes; i++)
            if (kg->nodes[i].op == IR_OP_KERNEL && kg->nodes[i].body == b && kg->nodes[i].index == q)
                cg_add_param(ps, i);
    ps->n_out = ps->n;
    for (int q = 0; q < kg->nodes[knode].n_in; q++) cg_add_param(ps, kg->nodes[knode].in[q]);
}
