/* needs: what a verification's fields must satisfy (docs/verify.md, "The random field"):
 * no constant of either side vanishes in them, and, when a side takes a square root, every
 * prime of the constants is a square mod p and mod q, so sqrt of a constant is its real root. */
#include <stdio.h>
#include <string.h>

#include "verify.h"

/* Adds g's constants (block graphs included) to *n: their numerators must not vanish, and
 * when g has a sqrt their primes must be squares mod p and mod q (both parts of an output are
 * compared, and a root may reach an exponent). *sq: g has a sqrt. */
static void scan_graph(const ir_graph *g, ff_needs *n, uint64_t *pr, int *npr, int *sq) {
    for (int i = 0; i < g->n_nodes; i++) {
        const ir_node *nd = &g->nodes[i];
        if (nd->body && nd->index == 0) scan_graph(nd->body, n, pr, npr, sq);
        *sq |= nd->op == IR_OP_SQRT;
        if (nd->op != IR_OP_CONST || nd->num == 0) continue;
        int dup = 0;
        for (int k = 0; k < n->n_nums; k++) dup |= n->nums[k] == nd->num;
        if (!dup && n->n_nums < FF_MAX_NUMS) n->nums[n->n_nums++] = nd->num;
        else if (!dup) snprintf(n->note, sizeof n->note, "more than %d constants: only the first are kept non-zero", FF_MAX_NUMS);
        uint64_t f[32], a = nd->num < 0 ? 0 - (uint64_t)nd->num : (uint64_t)nd->num;
        int nf = ff_factor(a, f, 32);
        nf += ff_factor((uint64_t)nd->den, f + nf, 32 - nf);
        for (int k = 0; k < nf; k++) {
            int have = 0;
            for (int j = 0; j < *npr; j++) have |= pr[j] == f[k];
            if (!have && *npr < 64) pr[(*npr)++] = f[k];
        }
    }
}

/* The needs of a verification of a against b (b may be NULL: the search's candidates share
 * the program's constants). 2 is a square in every field of the family (p, q = 7 mod 8);
 * the smallest other primes are kept, at most FF_MAX_QR, and the rest named in the note. */
void vf_field_needs(const ir_graph *a, const ir_graph *b, ff_needs *n) {
    uint64_t pr[64];
    int npr = 0, sq = 0;
    memset(n, 0, sizeof *n);
    scan_graph(a, n, pr, &npr, &sq);
    if (b) scan_graph(b, n, pr, &npr, &sq);
    n->qr_q = sq;
    for (int i = 0; sq && i < npr; i++) { /* ascending: insertion sort */
        uint64_t v = pr[i];
        int j = i;
        for (; j > 0 && pr[j - 1] > v; j--) pr[j] = pr[j - 1];
        pr[j] = v;
    }
    for (int i = 0; sq && i < npr; i++) {
        if (pr[i] == 2) continue;
        if (n->n_qr < FF_MAX_QR) n->qr[n->n_qr++] = pr[i];
        else {
            size_t k = strlen(n->note);
            snprintf(n->note + k, sizeof n->note - k, "%s%llu", k ? ", " : "sqrt of constants "
                     "agrees with the reals only for constants free of the primes ", (unsigned long long)pr[i]);
        }
    }
}

