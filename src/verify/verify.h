/* verify: probabilistic equivalence of a μGraph and a Lax program (Mirage §5). Random tests
 * over Z_p x Z_q (src/eval/ffeval.c), the Theorem 2 bound they give, a witness when they
 * differ, and a float test that rejects numerically unstable μGraphs. */
#ifndef MG_VERIFY_H
#define MG_VERIFY_H

#include "../eval/ff.h"
#include "../ir/ir.h"

/* Estimated degree d, number of exp terms k (the quantities of Theorem 2) and log2 h of the
 * size of the integer coefficients of prog's outputs, propagated op by op; see docs/verify.md
 * for the rules and their limits. */
void vf_estimate(const ir_graph *prog, int *d, double *k, double *h);
/* log2 of the per-test bound 8 d k^4 / 2^30 + 2^(-30/k^2) + ceil(2h/30) / family (Theorem 2 in
 * the family's smallest field, plus the chance of a field the coefficients make special);
 * >= 0 means vacuous. */
double vf_log2_bound(int d, double k, double h, double family);
/* Whether every exp term of prog has an exponent that is affine in an input of its own (or in
 * the right operand of a matmul of inputs) and linearly independent of the others, so that a
 * test's failure probability is degree / 2^30 whatever the number of terms (expform.c,
 * docs/verify.md). ok, or why not; degree: of the difference of two such programs in (p
 * parts, exp values); mm: the matmuls whose left operand's rows must be independent. */
enum { VF_XF_MAX_MM = 8 };
typedef struct vf_expform {
    int ok, degree, n_mm;
    int mm[VF_XF_MAX_MM];
    char why[160];
} vf_expform;
void vf_expform_analyze(const ir_graph *prog, vf_expform *x);
/* 1 if, in one test's q parts iq[] (prog's inputs in order), the rows of each recorded
 * matmul's left operand that meet one right-hand matrix are linearly independent mod Q. */
int vf_expform_rank_ok(const ir_graph *prog, const vf_expform *x, const uint32_t *const *iq, const ff_mod *Q);

/* The needs of a verification of a against b (b may be NULL) for ff_field_draw: the
 * numerators of both sides' constants, and their primes (at most FF_MAX_QR, the smallest;
 * 2 is a square in every field of the family) when either side takes a square root;
 * n->note names what is left out (needs.c). */
void vf_field_needs(const ir_graph *a, const ir_graph *b, ff_needs *n);

/* ug's input/output i corresponds to prog's in[i] / out[i] (positions among prog's inputs
 * and outputs), matched by name. */
enum { VF_MAX_IO = 1024 }; /* the 16-layer decode step (docs/decode.md) has 145 inputs */
typedef struct vf_io_map {
    int in[VF_MAX_IO], out[VF_MAX_IO];
    int n_in, n_out;
} vf_io_map;
/* Matches the interfaces of prog and ug: the same input and output names with the same
 * dtypes and shapes. MG_OK with *m filled, or MG_ERR_INVALID naming the first difference. */
mg_status vf_match_io(const ir_graph *prog, const ir_graph *ug, mg_ctx *ctx, vf_io_map *m);
/* Ragged programs p and u (the same lengths declarations): vf_verify of their static programs
 * at n_lengths length vectors (all 1, all at the maximum, then drawn; verify/ragged.c); the
 * first that differs is the verdict, naming its lengths; else equivalent, log2_bound the worst
 * vector's and the text listing the vectors tried. */
mg_status vf_verify_ragged(const ir_graph *p, const ir_graph *u, mg_ctx *ctx, int tests, uint64_t seed, int n_lengths,
                           mg_verify_report *r);
/* See mg_verify. */
mg_status vf_verify(const ir_graph *prog, const ir_graph *ug, mg_ctx *ctx, int tests,
                    uint64_t seed, mg_verify_report *r);
/* The program's side of vf_verify (its random test inputs and outputs) for checking many
 * candidates against one program: vf_verify_ref(f, ug, ...) gives what vf_verify(prog, ug,
 * ..., tests, seed, ...) gives. eager: build every test now (then vf_verify_ref only reads
 * f, and threads may share it), and report a failed field test without the float test's
 * figures (the search's screen); otherwise each is built on first use (single-threaded).
 * with (NULL ok): a μGraph whose constants the fields must also respect (docs/verify.md).
 * prog must outlive f. MG_ERR_NOMEM, MG_ERR_DIV_ZERO (prog divides by zero over the reals);
 * free with vf_ref_free (NULL ok). */
typedef struct vf_ref vf_ref;
mg_status vf_ref_new(const ir_graph *prog, const ir_graph *with, mg_ctx *ctx, int tests, uint64_t seed,
                     int eager, vf_ref **f);
mg_status vf_verify_ref(vf_ref *f, const ir_graph *ug, mg_ctx *ctx, mg_verify_report *r);
/* From now on vf_verify_ref stops between tests once *stop is non-zero (read atomically),
 * returning MG_ERR_LIMIT: a long verification does not outlive a search's time limit. */
void vf_ref_set_stop(vf_ref *f, const int *stop);
void vf_ref_free(vf_ref *f);

#endif
