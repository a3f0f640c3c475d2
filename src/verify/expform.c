/* expform: when a program's exp terms get a bound that does not grow with their number
 * (docs/verify.md, "Exp terms with independent exponents").
 *
 * In the field an exp value is Z = omega^g(x_q): its exponent g is computed from the inputs'
 * q parts, everything else from their p parts, and the two are drawn independently. If the
 * exponents of all exp elements of the program are affine in some inputs' q parts given the
 * rest, and linearly independent, the Z are independent and uniform on the q-th roots of
 * unity, and the difference of two programs is a polynomial in (p parts, Z) of small degree:
 * Schwartz-Zippel bounds a test by degree / 2^30, however many exp terms there are. Two
 * shapes of exponent qualify, each checked per exp node:
 *   (a) a private input: c X + r, X an input used injectively (no broadcast) that no other
 *       exponent reads, c a constant, r anything affine in other inputs: each element has a
 *       coordinate of its own;
 *   (b) a matmul of inputs: c (A B) + r, B read by no other exponent: given A, elements that
 *       meet the same column of B are independent when the rows of A meeting it are
 *       (vf_expform_rank_ok checks that in every test's q parts).
 * A μGraph's exponents are then matched to the program's element by element in the tests
 * (verify.c): its exp terms are the program's, so the bound covers the pair. */
#include <stdio.h>
#include <string.h>

#include "../eval/eval.h"
#include "../eval/ff.h"
#include "verify.h"

enum { MAX_ATOMS = 32, MAX_DEPTH = 64 };
typedef struct atom {
    int in, a;   /* the input read (the free one: X, or B), and A for a matmul (-1: none) */
    int mm;      /* the matmul node, -1 for (a) */
    int inj;     /* every path from it to the exponent is injective (no broadcast, no repeat) */
} atom;

/* The input under a chain of reshapes from node n, or -1. */
static int layout_input(const ir_graph *g, int n) {
    while (g->nodes[n].op == IR_OP_RESHAPE) n = g->nodes[n].in[0];
    return g->nodes[n].op == IR_OP_INPUT ? n : -1;
}

static int same_shape(const ir_shape *a, const ir_shape *b) { return !memcmp(a, b, sizeof *a); }

/* Collects the atoms of the exponent rooted at n: 0, or -1 if it is not an affine combination
 * (constant factors) of inputs and matmuls of inputs. */
static int atoms_of(const ir_graph *g, int n, int inj, int depth, atom *at, int *na) {
    const ir_node *nd = &g->nodes[n];
    if (depth > MAX_DEPTH || *na == MAX_ATOMS) return -1;
    switch (nd->op) {
    case IR_OP_CONST: return 0;
    case IR_OP_INPUT: at[(*na)++] = (atom){n, -1, -1, inj}; return 0;
    case IR_OP_RESHAPE: return atoms_of(g, nd->in[0], inj, depth + 1, at, na);
    case IR_OP_REPEAT: return atoms_of(g, nd->in[0], 0, depth + 1, at, na);
    case IR_OP_ADD:
    case IR_OP_SUB:
        for (int k = 0; k < 2; k++)
            if (atoms_of(g, nd->in[k], inj && same_shape(&g->nodes[nd->in[k]].shape, &nd->shape), depth + 1, at, na))
                return -1;
        return 0;
    case IR_OP_MUL:
    case IR_OP_DIV: { /* by a constant only */
        int k = g->nodes[nd->in[1]].op == IR_OP_CONST ? 0 : nd->op == IR_OP_MUL && g->nodes[nd->in[0]].op == IR_OP_CONST ? 1 : -1;
        if (k < 0) return -1;
        return atoms_of(g, nd->in[k], inj && same_shape(&g->nodes[nd->in[k]].shape, &nd->shape), depth + 1, at, na);
    }
    case IR_OP_MATMUL: {
        int a = layout_input(g, nd->in[0]), b = layout_input(g, nd->in[1]);
        if (a < 0 || b < 0 || a == b) return -1;
        at[(*na)++] = (atom){b, a, n, inj};
        return 0;
    }
    default: return -1;
    }
}

/* Degrees of numerator and denominator in (p parts, exp values), per node, capped. */
static void degrees(const ir_graph *g, int i, const int *dn, const int *dd, int *on, int *od) {
    const ir_node *n = &g->nodes[i];
    long a = n->n_in ? dn[n->in[0]] : 0, ad = n->n_in ? dd[n->in[0]] : 0;
    long b = n->n_in > 1 ? dn[n->in[1]] : 0, bd = n->n_in > 1 ? dd[n->in[1]] : 0;
    long rn = a, rd = ad, red = ir_ops[n->op].kind == IR_KIND_MATMUL ? g->nodes[n->in[0]].shape.d[g->nodes[n->in[0]].shape.ndim - 1] : n->group;
    switch (n->op) {
    case IR_OP_INPUT: rn = 1, rd = 0; break;
    case IR_OP_CONST: rn = 0, rd = 0; break;
    case IR_OP_EXP: rn = 1, rd = 0; break;
    case IR_OP_SILU: rd = ad + 1; break; /* x / (1 + Z') */
    case IR_OP_SQR: rn = 2 * a, rd = 2 * ad; break;
    case IR_OP_ADD:
    case IR_OP_SUB: rn = (a + bd > b + ad ? a + bd : b + ad), rd = ad + bd; break;
    case IR_OP_MUL: rn = a + b, rd = ad + bd; break;
    case IR_OP_DIV: rn = a + bd, rd = ad + b; break;
    case IR_OP_MATMUL: rn = a + b + (red - 1) * (ad + bd), rd = red * (ad + bd); break;
    case IR_OP_SUM: rn = a + (red - 1) * ad, rd = red * ad; break;
    case IR_OP_CONCAT: rn = a > b ? a : b, rd = ad > bd ? ad : bd; break;
    default: break; /* layout: the operand's */
    }
    *on = rn > (1 << 24) ? 1 << 24 : (int)rn, *od = rd > (1 << 24) ? 1 << 24 : (int)rd;
}

void vf_expform_analyze(const ir_graph *p, vf_expform *x) {
    memset(x, 0, sizeof *x);
    atom at[MAX_ATOMS * 4];
    int na = 0, owner[MAX_ATOMS * 4], n_exp = 0;
    for (int i = 0; i < p->n_nodes; i++) {
        const ir_node *n = &p->nodes[i];
        if (n->op == IR_OP_SQRT || n->op == IR_OP_KERNEL) {
            snprintf(x->why, sizeof x->why, "the program has %s", n->op == IR_OP_SQRT ? "a sqrt" : "kernels");
            return;
        }
        if (n->op != IR_OP_EXP && n->op != IR_OP_SILU) continue;
        int cnt = 0;
        atom mine[MAX_ATOMS];
        if (na + MAX_ATOMS > MAX_ATOMS * 4 || atoms_of(p, n->in[0], 1, 0, mine, &cnt)) {
            snprintf(x->why, sizeof x->why, "the exponent of node %d is not affine in inputs and matmuls of inputs", i);
            return;
        }
        for (int k = 0; k < cnt; k++) at[na] = mine[k], owner[na++] = i;
        n_exp++;
    }
    if (!n_exp) {
        snprintf(x->why, sizeof x->why, "no exp terms");
        return;
    }
    for (int i = 0; i < p->n_nodes; i++) { /* each exp node needs a free input no other exponent reads */
        if (p->nodes[i].op != IR_OP_EXP && p->nodes[i].op != IR_OP_SILU) continue;
        int found = 0;
        for (int k = 0; k < na && !found; k++) {
            if (owner[k] != i || !at[k].inj) continue;
            int uses = 0;
            for (int j = 0; j < na; j++) uses += at[j].in == at[k].in || at[j].a == at[k].in;
            if (uses != 1) continue;
            found = 1;
            if (at[k].mm >= 0 && x->n_mm < VF_XF_MAX_MM) x->mm[x->n_mm++] = at[k].mm;
            else if (at[k].mm >= 0) found = 0;
        }
        if (!found) {
            snprintf(x->why, sizeof x->why, "the exponent of node %d has no input of its own (shared, or broadcast)", i);
            return;
        }
    }
    int *dn = base_calloc((size_t)p->n_nodes + 1, sizeof *dn), *dd = base_calloc((size_t)p->n_nodes + 1, sizeof *dd);
    if (!dn || !dd) {
        base_free(dn), base_free(dd);
        snprintf(x->why, sizeof x->why, "out of memory");
        return;
    }
    for (int i = 0; i < p->n_nodes; i++) degrees(p, i, dn, dd, &dn[i], &dd[i]);
    for (int o = 0; o < p->n_outputs; o++) {
        int d = dn[p->outputs[o]] + dd[p->outputs[o]];
        if (d > x->degree) x->degree = d;
    }
    base_free(dn), base_free(dd);
    x->degree *= 2; /* the difference of two such fractions, denominators cleared */
    x->ok = 1;
}

/* Rank of the r x k matrix m (row-major, entries < Q) over Z_q, destroying m. */
static int rank_mod(uint32_t *m, int r, int64_t k, const ff_mod *Q) {
    int rank = 0;
    for (int64_t c = 0; c < k && rank < r; c++) {
        int piv = -1;
        for (int i = rank; i < r && piv < 0; i++)
            if (m[i * k + c]) piv = i;
        if (piv < 0) continue;
        for (int64_t j = 0; j < k; j++) { /* swap the pivot row up */
            uint32_t t = m[piv * k + j];
            m[piv * k + j] = m[rank * k + j], m[rank * k + j] = t;
        }
        uint32_t inv = ff_inv(m[rank * k + c], Q);
        for (int i = rank + 1; i < r; i++) {
            uint32_t f = ff_mul(m[i * k + c], inv, Q);
            if (!f) continue;
            for (int64_t j = c; j < k; j++) m[i * k + j] = ff_sub(m[i * k + j], ff_mul(f, m[rank * k + j], Q), Q->m);
        }
        rank++;
    }
    return rank;
}

int vf_expform_rank_ok(const ir_graph *p, const vf_expform *x, const uint32_t *const *iq, const ff_mod *Q) {
    for (int k = 0; k < x->n_mm; k++) {
        const ir_node *mm = &p->nodes[x->mm[k]];
        int a = layout_input(p, mm->in[0]), pos = 0;
        for (int i = 0; i < a; i++) pos += p->nodes[i].op == IR_OP_INPUT;
        const ir_shape *as = &p->nodes[mm->in[0]].shape;
        ev_matmul m;
        if (ev_matmul_init(&m, &mm->shape, as, &p->nodes[mm->in[1]].shape)) return 0;
        int ok = m.m <= m.k;
        uint32_t *rows = ok ? base_alloc((size_t)(m.m * m.k) * sizeof *rows) : NULL;
        ok = ok && rows;
        /* each B matrix meets the rows of the A matrices of the batches that read it; a batch
         * repeating an earlier one's (A, B) pair computes the same elements, the same terms */
        for (int64_t t = 0; ok && t < m.batch; t++) {
            int first = 1, again = 0;
            for (int64_t u = 0; u < t; u++) {
                first &= m.b_off[u] != m.b_off[t];
                again |= m.b_off[u] == m.b_off[t] && m.a_off[u] == m.a_off[t];
            }
            if (again) continue;
            if (!first) { ok = 0; break; } /* two A matrices on one B: rows would need a joint check */
            memcpy(rows, iq[pos] + m.a_off[t], (size_t)(m.m * m.k) * sizeof *rows);
            ok = rank_mod(rows, (int)m.m, m.k, Q) == m.m;
        }
        base_free(rows);
        ev_matmul_free(&m);
        if (!ok) return 0;
    }
    return 1;
}
