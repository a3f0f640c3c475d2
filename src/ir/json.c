/* json: kernel graph <-> JSON, through Debian's libcjson (docs/ir.md, "JSON form").
 *   {"format": "mugen-program", "version": 1,
 *    "tensors": [{"name": "X", "op": "input", "dtype": "f16", "shape": [2, 4096]},
 *                {"name": "t1", "op": "sqr", "inputs": ["X"]},
 *                {"name": "t2", "op": "div", "inputs": ["t1", {"const": "4096"}]}, ...,
 *                {"name": "C", "op": "const", "value": "0.5"}],
 *    "outputs": ["O"]}
 * Anonymous constants are written inline where they are used; named ones are tensors.
 * Tensors are listed in topological order; "dtype"/"shape" of op tensors are written for
 * readers and, when present on import, must match what shape inference gives.
 * Import is the second front end beside parse.c (api.c picks it when the first non-blank byte
 * is '{') and builds through the same ir_add_* calls, so the same shape rules and limits
 * apply; export sits beside print.c. */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"


/* cJSON allocates through the library's hook too; a failed allocation is remembered so that
 * a parse failure caused by it reads as out of memory, not as malformed JSON. cJSON's hooks
 * are process-wide, so the flag is a global, reset by use_our_allocator at the start of each
 * import and export: this module is not safe to call from two threads at once. */
static int cj_oom;
static void *cj_alloc(size_t n) {
    void *p = base_alloc(n);
    if (!p) cj_oom = 1;
    return p;
}

static void use_our_allocator(void) {
    cJSON_Hooks h = {cj_alloc, base_free};
    cJSON_InitHooks(&h);
    cj_oom = 0;
}

/* Builds the whole cJSON tree, then prints it. Most cJSON_Add* results are not checked one by
 * one: a failed allocation inside them sets cj_oom, which is tested once before anything is
 * written to sb, so an incomplete tree is never emitted. ts and outs belong to this function
 * until attached to root, then to root (hence set to NULL), so the cleanup at done frees each
 * exactly once. */
/* Attaches item under key, or frees it if attaching fails (allocation of the key). */
static void add_item(cJSON *obj, const char *key, cJSON *item) {
    if (item && !cJSON_AddItemToObject(obj, key, item)) cJSON_Delete(item);
}

static cJSON *int_array(const int64_t *v, int n) {
    cJSON *a = cJSON_CreateArray();
    for (int k = 0; a && k < n; k++) cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v[k]));
    return a;
}

/* sizes as numbers, a ragged dim as its lengths' name: a shape's (rag codes, dims >= 1) or
 * reshape's new_shape (-1 - k) */
static cJSON *dims_array(const ir_graph *g, const int64_t *v, const signed char *rag, int n) {
    cJSON *a = cJSON_CreateArray();
    for (int k = 0; a && k < n; k++) {
        int r = rag ? (k ? rag[k] : 0) : v[k] < 0 ? (int)-v[k] : 0;
        cJSON_AddItemToArray(a, r && r <= g->n_lens ? cJSON_CreateString(g->lens[r - 1].name)
                                                    : cJSON_CreateNumber((double)v[k]));
    }
    return a;
}

static cJSON *map_array(const int map[3]) {
    int64_t v[3] = {map[0], map[1], map[2]};
    return int_array(v, 3);
}

/* The JSON key of each attribute letter of ops.def's attrs column (docs/ir.md, "JSON form"). */
static const char *json_key(char letter) {
    static const char letters[] = "dgstifo" "rlh" "pbne";
    static const char *const keys[] = {"dim",  "group", "new_shape", "times", "imap", "fmap",
                                       "omap", "grid",  "forloop",   "threads", "perm", "start",
                                       "len",  "eps"};
    const char *c = strchr(letters, tolower((unsigned char)letter));
    return c && *c ? keys[c - letters] : "";
}

/* The attributes of n's op as docs/ir.md names them, in its ops.def order: sum and max write
 * dim (sum also group, written even when it is the whole dim), concat dim, reshape new_shape,
 * repeat times, the μGraph operators their maps and fmap (even when phi). A kernel's grid,
 * forloop and threads are write_kernel's. */
static void write_attrs(const ir_graph *g, const ir_node *n, cJSON *t) {
    for (const char *c = ir_ops[n->op].attrs; *c; c++) {
        const char *key = json_key(*c);
        switch (tolower((unsigned char)*c)) {
        case 'd': cJSON_AddNumberToObject(t, key, n->dim); break;
        case 'g': cJSON_AddNumberToObject(t, key, (double)n->group); break;
        case 's': add_item(t, key, dims_array(g, n->ints, NULL, n->n_ints)); break;
        case 't':
        case 'p': add_item(t, key, int_array(n->ints, n->n_ints)); break;
        case 'b': cJSON_AddNumberToObject(t, key, (double)n->ints[0]); break;
        case 'n': cJSON_AddNumberToObject(t, key, (double)n->ints[1]); break;
        case 'i':
        case 'o': add_item(t, key, map_array(n->map)); break;
        case 'f': cJSON_AddNumberToObject(t, key, n->fmap); break;
        default: break;
        }
    }
}

static int write_tensors(const ir_graph *g, cJSON *tarr, arena *a);

/* A kernel: one entry for all its outputs ("names"), its schedule and its block graph. */
static int write_kernel(const ir_graph *g, int i, const char **names, cJSON *t, arena *a) {
    const ir_node *n = &g->nodes[i];
    const ir_graph *b = n->body;
    cJSON *nm = cJSON_AddArrayToObject(t, "names");
    for (int k = 0; nm && k < b->n_outputs; k++) cJSON_AddItemToArray(nm, cJSON_CreateString(names[i + k]));
    cJSON_AddStringToObject(t, "op", "kernel");
    cJSON *in = cJSON_AddArrayToObject(t, "inputs");
    for (int k = 0; in && k < n->n_in; k++) cJSON_AddItemToArray(in, cJSON_CreateString(names[n->in[k]]));
    int64_t grid[3] = {b->grid[0], b->grid[1], b->grid[2]};
    add_item(t, "grid", int_array(grid, 3));
    cJSON_AddNumberToObject(t, "forloop", (double)b->forloop);
    cJSON_AddNumberToObject(t, "threads", b->threads);
    cJSON *blk = cJSON_AddObjectToObject(t, "block"), *bt = blk ? cJSON_AddArrayToObject(blk, "tensors") : NULL;
    return bt ? write_tensors(b, bt, a) : -1;
}

/* Appends one object per tensor of g to tarr (anonymous constants are written inline where
 * they are used; a kernel's output nodes share one entry). 0, or -1 if out of memory. */
static int write_tensors(const ir_graph *g, cJSON *tarr, arena *a) {
    const char **names = ir_node_names(g, a, 1);
    if (!names) return -1;
    for (int i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        if (n->op == IR_OP_CONST && !n->name) continue; /* inlined at its uses */
        if (n->op == IR_OP_KERNEL && n->index > 0) continue;
        cJSON *t = cJSON_CreateObject();
        if (!t) return -1;
        cJSON_AddItemToArray(tarr, t);
        if (n->op == IR_OP_KERNEL) {
            if (write_kernel(g, i, names, t, a)) return -1;
            continue;
        }
        if (n->op != IR_OP_SAVE) cJSON_AddStringToObject(t, "name", names[i]);
        cJSON_AddStringToObject(t, "op", ir_ops[n->op].name);
        /* a named constant is a tensor of its own; its value is the literal as a string, since
         * a JSON number is a double and would lose the exact decimal */
        if (n->op == IR_OP_CONST) {
            cJSON_AddStringToObject(t, "value", n->lit);
            continue;
        }
        if (n->op == IR_OP_ITER) cJSON_AddStringToObject(t, "input", g->kin_name[n->index]);
        if (n->n_in) {
            cJSON *in = cJSON_AddArrayToObject(t, "inputs");
            for (int k = 0; in && k < n->n_in; k++) {
                const ir_node *src = &g->nodes[n->in[k]];
                cJSON *ref = cJSON_CreateString(names[n->in[k]]);
                if (src->op == IR_OP_CONST && !src->name) {
                    cJSON_Delete(ref);
                    ref = cJSON_CreateObject();
                    cJSON_AddStringToObject(ref, "const", src->lit);
                }
                cJSON_AddItemToArray(in, ref);
            }
        }
        write_attrs(g, n, t);
        /* for readers only: import recomputes both and checks them against these */
        cJSON_AddStringToObject(t, "dtype", base_dtype_name(n->dtype));
        add_item(t, "shape", dims_array(g, n->shape.d, n->shape.rag, n->shape.ndim));
        if (n->op == IR_OP_INPUT && ir_input_range(n) != 1) cJSON_AddNumberToObject(t, "range", ir_input_range(n));
    }
    return 0;
}

mg_status ir_print_json(const ir_graph *g, mg_ctx *ctx, strbuf *sb) {
    use_our_allocator();
    arena a;
    arena_init(&a);
    const char **names = ir_node_names(g, &a, 1);
    cJSON *root = cJSON_CreateObject(), *ts = cJSON_CreateArray(), *outs = cJSON_CreateArray();
    mg_status rc = MG_ERR_NOMEM;
    if (!names || !root || !ts || !outs) goto done;
    cJSON_AddStringToObject(root, "format", "mugen-program");
    cJSON_AddNumberToObject(root, "version", 1);
    if (g->n_lens) { /* ragged programs: the lengths their shapes name */
        cJSON *ls = cJSON_AddArrayToObject(root, "lengths");
        for (int k = 0; ls && k < g->n_lens; k++) {
            cJSON *l = cJSON_CreateObject();
            if (!l) break;
            cJSON_AddItemToArray(ls, l);
            cJSON_AddStringToObject(l, "name", g->lens[k].name);
            cJSON_AddNumberToObject(l, "count", (double)g->lens[k].count);
            cJSON_AddNumberToObject(l, "max", (double)g->lens[k].max);
        }
    }
    if (!cJSON_AddItemToObject(root, "tensors", ts)) goto done;
    ts = NULL; /* owned by root now */
    if (!cJSON_AddItemToObject(root, "outputs", outs)) goto done;
    outs = NULL;
    if (write_tensors(g, cJSON_GetObjectItem(root, "tensors"), &a)) goto done;
    cJSON *oarr = cJSON_GetObjectItem(root, "outputs");
    for (int k = 0; k < g->n_outputs; k++)
        cJSON_AddItemToArray(oarr, cJSON_CreateString(names[g->outputs[k]]));
    char *text = cJSON_Print(root);
    if (!text || cj_oom) { /* some item could not be allocated: the tree is incomplete */
        cJSON_free(text);
        goto done;
    }
    sb_puts(sb, text);
    sb_puts(sb, "\n");
    cJSON_free(text);
    rc = sb->oom ? MG_ERR_NOMEM : MG_OK;
done:
    cJSON_Delete(root);
    cJSON_Delete(ts);
    cJSON_Delete(outs);
    arena_free(&a);
    return rc ? ctx_err(ctx, rc, "out of memory while writing JSON") : MG_OK;
}

/* ---- import ---- */

/* Import state: the graph being built and the tensor being read, for messages. idx is -1
 * outside the tensors list (top-level fields, outputs); name is set once that tensor's
 * "name" has been read, NULL before. */
typedef struct jin {
    mg_ctx *ctx;
    const char *file;
    ir_graph *g;
    int idx; /* tensors[idx] being read */
    const char *name;
} jin;

/* Reports at tensors[idx] with status rc (MG_ERR_PARSE unless a graph call said otherwise).
 * The message is formatted into a local buffer first, so jfwd may pass ctx->msg itself. */
static mg_status jerr_rc(jin *j, mg_status rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static mg_status jerr_rc(jin *j, mg_status rc, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (j->idx >= 0)
        return ctx_err(j->ctx, rc, "%s: tensors[%d]%s%.64s%s: %s", j->file, j->idx,
                       j->name ? " ('" : "", j->name ? j->name : "", j->name ? "')" : "", msg);
    return ctx_err(j->ctx, rc, "%s: %s", j->file, msg);
}
#define jerr(j, ...) jerr_rc(j, MG_ERR_PARSE, __VA_ARGS__)
/* Re-reports the message a graph call left in ctx, keeping its status (-r). */
#define jfwd(j, r) jerr_rc(j, (mg_status)-(r), "%s", (j)->ctx ? (j)->ctx->msg : "error")


/* Reads an integer field; 1 if present and valid, 0 if absent, -1 if malformed.
 * The range test comes first, written so that NaN fails it; only then is the double cast to
 * int64 (a cast out of range would be undefined) and compared back to catch fractions. */
static int get_int(const cJSON *o, const char *key, int64_t lo, int64_t hi, int64_t *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) return 0;
    if (!cJSON_IsNumber(v)) return -1;
    double d = v->valuedouble;
    if (!(d >= (double)lo && d <= (double)hi) || d != (double)(int64_t)d) return -1;
    *out = (int64_t)d;
    return 1;
}

/* Reads a list of integers, each in [lo, IR_MAX_DIM] (sizes: lo = 1; a perm's dims: lo = 0),
 * at most max of them. Returns the count, -2 if the key is absent, -1 if malformed. */
static int get_list(const cJSON *o, const char *key, int64_t *out, int max, int64_t lo) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) return -2;
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) > max) return -1;
    int n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, v) { /* range first: casting 1e300 to int64_t is undefined */
        if (!cJSON_IsNumber(e) ||
            !(e->valuedouble >= (double)lo && e->valuedouble <= (double)IR_MAX_DIM) ||
            e->valuedouble != (double)(int64_t)e->valuedouble)
            return -1;
        out[n++] = (int64_t)e->valuedouble;
    }
    return n;
}
static int get_int_list(const cJSON *o, const char *key, int64_t *out, int max) {
    return get_list(o, key, out, max, 1);
}
/* get_int_list where an entry may also be a lengths name of g (a ragged dim): in a shape
 * (rag given) its code k + 1 in rag and its maximum in out, else -1 - k in out. */
static int get_dims(const ir_graph *g, const cJSON *o, const char *key, int64_t *out, signed char *rag) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) return -2;
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) > IR_MAX_DIMS) return -1;
    int n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, v) {
        if (cJSON_IsString(e)) {
            int k = ir_find_lengths(g, e->valuestring);
            if (k < 0 || (rag && n == 0)) return -1;
            if (rag) rag[n] = (signed char)(k + 1), out[n++] = g->lens[k].max;
            else out[n++] = -1 - k;
        } else if (!cJSON_IsNumber(e) || !(e->valuedouble >= 1 && e->valuedouble <= (double)IR_MAX_DIM) ||
                   e->valuedouble != (double)(int64_t)e->valuedouble)
            return -1;
        else out[n++] = (int64_t)e->valuedouble;
    }
    return n;
}

static int is_ident(const char *s) {
    if (!(isalpha((unsigned char)s[0]) || s[0] == '_')) return 0;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_')) return 0;
    return 1;
}

/* 1 if key is the JSON name of an attribute op takes (ops.def attrs). */
static int takes_key(ir_op op, const char *key) {
    for (const char *c = ir_ops[op].attrs; *c; c++)
        if (!strcmp(json_key(*c), key)) return 1;
    return 0;
}

/* The first field of tensor object t that op does not take, or NULL. Extra fields are
 * refused rather than ignored, so a JSON program means exactly what it says. A constant has
 * a name and a value; a kernel names its outputs and holds a block; every other tensor has
 * a name, dtype and shape, an iterator the input it reads, others their inputs. */
static const char *unknown_key(const cJSON *t, ir_op op) {
    const cJSON *e;
    cJSON_ArrayForEach(e, t) {
        const char *k = e->string;
        int ok = !strcmp(k, "op") || takes_key(op, k);
        if (op == IR_OP_CONST) ok |= !strcmp(k, "name") || !strcmp(k, "value");
        else if (op == IR_OP_KERNEL)
            ok |= !strcmp(k, "names") || !strcmp(k, "inputs") || !strcmp(k, "block");
        else {
            ok |= !strcmp(k, "name") || !strcmp(k, "dtype") || !strcmp(k, "shape");
            if (op == IR_OP_ITER) ok |= !strcmp(k, "input");
            else if (op != IR_OP_INPUT) ok |= !strcmp(k, "inputs");
            else ok |= !strcmp(k, "range");
        }
        if (!ok) return k;
    }
    return NULL;
}

static mg_status read_kernel(jin *j, const cJSON *t);

/* A grid map: a list of up to 3 entries, each a tensor dim or -1 (phi). 1 if read, 0 if
 * absent (all phi), -1 if malformed. */
static int get_map(const cJSON *o, const char *key, int map[3]) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key), *e;
    map[0] = map[1] = map[2] = -1;
    if (!v) return 0;
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) > 3) return -1;
    int n = 0;
    cJSON_ArrayForEach(e, v) {
        if (!cJSON_IsNumber(e) || !(e->valuedouble >= -1 && e->valuedouble < IR_MAX_DIMS) ||
            e->valuedouble != (double)(int)e->valuedouble)
            return -1;
        map[n++] = (int)e->valuedouble;
    }
    return 1;
}

/* An input (name, dtype, shape) or a named constant (its value as a decimal string). */
static mg_status read_source(jin *j, const cJSON *t, int code) {
    int i, rc;
    if (code == IR_OP_CONST) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(t, "value");
        if (!cJSON_IsString(v)) return jerr(j, "a const needs a string \"value\"");
        i = ir_add_const(j->g, j->ctx, v->valuestring, 0, 0);
        if (i < 0) return jfwd(j, i);
        rc = ir_set_name(j->g, j->ctx, i, j->name);
        return rc < 0 ? jfwd(j, rc) : MG_OK;
    }
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(t, "dtype");
    int d = cJSON_IsString(dt) ? ir_dtype_parse(dt->valuestring, strlen(dt->valuestring)) : -1;
    if (d < 0) return jerr(j, "an input needs \"dtype\": \"f16\", \"bf16\" or \"f32\"");
    ir_shape s = {0};
    s.ndim = get_dims(j->g, t, "shape", s.d, s.rag);
    if (s.ndim < 0)
        return jerr(j, "an input needs \"shape\": a list of at most 4 sizes in [1, 2^31) or declared lengths' names");
    const cJSON *rg = cJSON_GetObjectItemCaseSensitive(t, "range");
    if (rg && (!cJSON_IsNumber(rg) || !(rg->valuedouble > 0) || !(rg->valuedouble <= 1e30)))
        return jerr(j, "an input's \"range\" (its random test values' half-width) is a number in (0, 1e30]");
    rc = ir_add_input(j->g, j->ctx, j->name, (mg_dtype)d, &s);
    if (rc >= 0 && rg) ir_set_input_range(j->g, rc, rg->valuedouble);
    return rc < 0 ? jfwd(j, rc) : MG_OK;
}

/* n's operands from the "inputs" list: names of earlier tensors, or inline {"const": "..."}
 * objects, each of which becomes an anonymous constant node. */
static mg_status read_operands(jin *j, const cJSON *in, ir_node *n) {
    const cJSON *e;
    cJSON_ArrayForEach(e, in) {
        if (n->n_in == IR_MAX_IN) return jerr(j, "too many inputs");
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(e, "const");
        if (cJSON_IsObject(e) && cJSON_IsString(c)) { /* an inline constant */
            int ci = ir_add_const(j->g, j->ctx, c->valuestring, 0, 0);
            if (ci < 0) return jfwd(j, ci);
            n->in[n->n_in++] = ci;
            continue;
        }
        if (!cJSON_IsString(e)) return jerr(j, "inputs must be tensor names or {\"const\": \"1.5\"}");
        int k = ir_find(j->g, e->valuestring);
        if (k < 0) {
            /* its own name is not in the map yet: ir_set_name runs last */
            if (!strcmp(e->valuestring, j->name))
                return jerr(j, "reads itself (a cycle)");
            return jerr(j, "reads '%.64s', which is not defined before it (unknown tensor, or a "
                        "cycle: tensors must be listed in topological order)", e->valuestring);
        }
        n->in[n->n_in++] = k;
    }
    return MG_OK;
}

/* The attributes of n from t, which unknown_key has held to those its op takes: the maps
 * (absent: all phi) and fmap (absent: -1), read before the operands... */
static mg_status read_maps(jin *j, const cJSON *t, ir_node *n) {
    if (get_map(t, ir_op_attr(n->op, 'o') ? "omap" : "imap", n->map) < 0)
        return jerr(j, "a map lists up to 3 entries, each a tensor dim or -1");
    int64_t fm = -1;
    if (get_int(t, "fmap", -1, IR_MAX_DIMS - 1, &fm) < 0) return jerr(j, "bad \"fmap\"");
    n->fmap = (int)fm;
    return MG_OK;
}

/* ...and after them dim and group (absent: 0, which is dim 0 and, for group, the whole dim,
 * see infer), a reshape's or repeat's list, a transpose's perm, a slice's start and len. */
static mg_status read_sizes(jin *j, const cJSON *t, ir_node *n) {
    int64_t v = 0;
    if (get_int(t, "dim", -IR_MAX_DIMS, IR_MAX_DIMS - 1, &v) < 0) return jerr(j, "bad \"dim\"");
    n->dim = (int)v;
    if (get_int(t, "group", 1, IR_MAX_DIM, &n->group) < 0)
        return jerr(j, "\"group\" must be an integer in [1, %" PRId64 "]", IR_MAX_DIM);
    char c = ir_op_attr(n->op, 's') ? 's' : ir_op_attr(n->op, 't') ? 't' : 0;
    if (c && (n->n_ints = c == 's' ? get_dims(j->g, t, json_key(c), n->ints, NULL)
                                   : get_int_list(t, json_key(c), n->ints, IR_MAX_DIMS)) < 0)
        return jerr(j, "needs \"%s\": a list of at most 4 positive sizes", json_key(c));
    if (n->op == IR_OP_TRANSPOSE && (n->n_ints = get_list(t, "perm", n->ints, IR_MAX_DIMS, 0)) < 0)
        return jerr(j, "needs \"perm\": a list of at most 4 dims");
    if (n->op == IR_OP_SLICE) { /* both required; infer checks them against the operand */
        n->n_ints = 2;
        if (get_int(t, "start", 0, IR_MAX_DIM, &n->ints[0]) < 1 ||
            get_int(t, "len", 1, IR_MAX_DIM, &n->ints[1]) < 1)
            return jerr(j, "needs \"start\" (an integer >= 0) and \"len\" (>= 1)");
    }
    return MG_OK;
}

/* The optional "dtype" and "shape" of t must match what inference gave node i. */
static mg_status check_inferred(jin *j, const cJSON *t, int i) {
    const ir_node *n = &j->g->nodes[i];
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(t, "dtype");
    if (dt && (!cJSON_IsString(dt) || strcmp(dt->valuestring, base_dtype_name(n->dtype))))
        return jerr(j, "\"dtype\" does not match the inferred %s", base_dtype_name(n->dtype));
    ir_shape s = {0};
    s.ndim = get_dims(j->g, t, "shape", s.d, s.rag);
    s.rag[0] = n->shape.rag[0]; /* the batch is not written */
    if (s.ndim != -2 && (s.ndim < 0 || memcmp(&s, &n->shape, sizeof s))) {
        char sh[128];
        return jerr(j, "\"shape\" does not match the inferred %s",
                    ir_shape_gstr(j->g, n->dtype, &n->shape, sh, sizeof sh));
    }
    return MG_OK;
}

/* An operator tensor: an iterator names the kernel input it reads, every other op lists its
 * "inputs"; then the attributes, the node (which infers its shape), the check of the given
 * dtype and shape, and its name, or for a saver its place among the kernel's outputs. */
static mg_status read_op(jin *j, const cJSON *t, int code) {
    ir_node n = {.op = (ir_op)code, .fmap = -1};
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(t, "inputs");
    mg_status st;
    if (code == IR_OP_ITER) { /* reads a kernel input by name */
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(t, "input");
        n.index = -1;
        for (int k = 0; cJSON_IsString(x) && k < j->g->n_kin; k++)
            if (!strcmp(j->g->kin_name[k], x->valuestring)) n.index = k;
        if (n.index < 0) return jerr(j, "iter needs \"input\": the name of one of the kernel's inputs");
        in = NULL;
    } else if (!cJSON_IsArray(in)) return jerr(j, "needs an \"inputs\" list");
    if ((st = read_maps(j, t, &n))) return st;
    if (code == IR_OP_SAVE) n.index = j->g->n_outputs;
    if ((st = read_operands(j, in, &n))) return st;
    if (code != IR_OP_KERNEL && n.n_in != ir_ops[code].arity)
        return jerr(j, "'%s' takes %d inputs, got %d", ir_ops[code].name, ir_ops[code].arity,
                    n.n_in);
    if ((st = read_sizes(j, t, &n))) return st;
    int i = ir_add_node(j->g, j->ctx, &n), rc;
    if (i < 0) return jfwd(j, i);
    if ((st = check_inferred(j, t, i))) return st;
    if (code == IR_OP_SAVE) { /* the k-th saver is the kernel's k-th output */
        rc = ir_add_output(j->g, j->ctx, i);
        return rc < 0 ? jfwd(j, rc) : MG_OK;
    }
    rc = ir_set_name(j->g, j->ctx, i, j->name);
    return rc < 0 ? jfwd(j, rc) : MG_OK;
}

/* Reads one element of "tensors" and adds it to j->g. Inputs and named constants use their
 * own constructors (read_source), operators read_op; keys an op does not take are refused
 * (unknown_key). The node is added, which infers its shape, before the optional "dtype" and
 * "shape" are compared with the result; on any error the caller drops the whole graph. */
static mg_status read_tensor(jin *j, const cJSON *t) {
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(t, "name");
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(t, "op");
    if (!cJSON_IsObject(t)) return jerr(j, "expected an object");
    if (cJSON_IsString(op) && !strcmp(op->valuestring, "kernel")) return read_kernel(j, t);
    if (cJSON_IsString(op) && !strcmp(op->valuestring, "save") && !nm) nm = op; /* savers are anonymous */
    if (!cJSON_IsString(nm) || !nm->valuestring[0]) return jerr(j, "needs a string \"name\"");
    j->name = nm->valuestring;
    /* the same names as in .mu text, so every JSON program can be printed and re-parsed */
    if (strlen(j->name) > 255) return jerr(j, "name is longer than 255 characters");
    if (!is_ident(j->name))
        return jerr(j, "names are letters, digits and '_', not starting with a digit");
    if (!strcmp(j->name, "input") || !strcmp(j->name, "output"))
        return jerr(j, "'%s' is a keyword and cannot name a tensor", j->name);
    if (!cJSON_IsString(op)) return jerr(j, "needs a string \"op\"");
    /* op names are looked up in the op table, so JSON knows every ops.def row that can be a
     * node (a compound, levels 0, is written as its primitives) */
    int code = -1;
    for (int k = 0; k < IR_OP_COUNT; k++)
        if (ir_ops[k].levels && !strcmp(op->valuestring, ir_ops[k].name)) code = k;
    if (code < 0) return jerr(j, "unknown op '%.64s'", op->valuestring);
    const char *bad = unknown_key(t, (ir_op)code);
    if (bad) return jerr(j, "'%s' takes no field \"%.64s\"", ir_ops[code].name, bad);
    if (code == IR_OP_INPUT || code == IR_OP_CONST) return read_source(j, t, code);
    return read_op(j, t, code);
}

/* {"names": [...], "op": "kernel", "inputs": [...], "grid": [x, y, z], "forloop": N,
 * "threads": N, "block": {"tensors": [...]}}: the block graph is read like a program, into
 * its own graph, then becomes the kernel's output nodes (ir_add_kernel). */
/* A kernel's "names" (into names[], setting j->name to the first for messages) and "inputs"
 * (tensors of j->g, into in[]); their counts go to *n_names and *n_in. */
static mg_status kernel_io(jin *j, const cJSON *t, const char **names, int *n_names, int *in,
                           int *n_in) {
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(t, "names");
    const cJSON *is = cJSON_GetObjectItemCaseSensitive(t, "inputs"), *e;
    if (!cJSON_IsArray(nm) || cJSON_GetArraySize(nm) < 1 || cJSON_GetArraySize(nm) > IR_MAX_IN)
        return jerr(j, "a kernel needs \"names\": 1 to %d output names", IR_MAX_IN);
    *n_names = *n_in = 0;
    cJSON_ArrayForEach(e, nm) {
        if (!cJSON_IsString(e) || !is_ident(e->valuestring) || strlen(e->valuestring) > 255)
            return jerr(j, "kernel output names are identifiers");
        names[(*n_names)++] = e->valuestring;
    }
    j->name = names[0];
    if (!cJSON_IsArray(is) || cJSON_GetArraySize(is) < 1 || cJSON_GetArraySize(is) > IR_MAX_IN)
        return jerr(j, "a kernel needs \"inputs\": 1 to %d tensor names", IR_MAX_IN);
    cJSON_ArrayForEach(e, is) {
        int k = cJSON_IsString(e) ? ir_find(j->g, e->valuestring) : -1;
        if (k < 0)
            return jerr(j, "kernel input %.64s is not defined before it",
                        cJSON_IsString(e) ? e->valuestring : "?");
        in[(*n_in)++] = k;
    }
    return MG_OK;
}

/* Reads the block graph's tensors bts into body (its kernel inputs, the tensors in[0..n_in)
 * of j->g, declared first); messages name the kernel by its first output, name0. */
static mg_status read_block(jin *j, ir_graph *body, const cJSON *bts, const int *in, int n_in,
                            const char *name0) {
    mg_status rc = MG_OK;
    for (int k = 0; k < n_in && !rc; k++) {
        const ir_node *x = &j->g->nodes[in[k]];
        char lb[128];
        int r = ir_block_add_kin(body, j->ctx, ir_node_label(j->g, in[k], lb, sizeof lb),
                                 x->dtype, &x->shape);
        if (r < 0) rc = jfwd(j, r);
    }
    char file[512];
    snprintf(file, sizeof file, "%s: kernel '%s'", j->file, name0);
    jin jb = {.ctx = j->ctx, .file = file, .g = body, .idx = 0};
    int k = 0;
    for (const cJSON *bt = bts->child; !rc && bt; bt = bt->next, k++) {
        jb.idx = k, jb.name = NULL;
        rc = read_tensor(&jb, bt);
    }
    return rc;
}

static mg_status read_kernel(jin *j, const cJSON *t) {
    const cJSON *blk = cJSON_GetObjectItemCaseSensitive(t, "block");
    const cJSON *bts = cJSON_GetObjectItemCaseSensitive(blk, "tensors");
    const char *bad = unknown_key(t, IR_OP_KERNEL);
    j->name = NULL;
    if (bad) return jerr(j, "'kernel' takes no field \"%.64s\"", bad);
    const char *names[IR_MAX_IN];
    int n_names = 0, inputs[IR_MAX_IN], n_in = 0;
    mg_status rc = kernel_io(j, t, names, &n_names, inputs, &n_in);
    if (rc) return rc;
    int64_t grid[IR_MAX_DIMS] = {1, 1, 1, 1}, forloop = 1, threads = 128;
    int ng = get_int_list(t, "grid", grid, 3);
    if (ng < 1) return jerr(j, "a kernel needs \"grid\": 1 to 3 sizes");
    if (get_int(t, "forloop", 1, IR_MAX_DIM, &forloop) < 0)
        return jerr(j, "\"forloop\" must be an integer in [1, %" PRId64 "]", IR_MAX_DIM);
    if (get_int(t, "threads", 1, 1024, &threads) < 0)
        return jerr(j, "\"threads\" must be an integer in [1, 1024]");
    for (int g = ng; g < 3; g++) grid[g] = 1;
    if (!cJSON_IsArray(bts)) return jerr(j, "a kernel needs \"block\": {\"tensors\": [...]}");
    int gi[3] = {(int)grid[0], (int)grid[1], (int)grid[2]};
    ir_graph *body = ir_block_new(gi, (int)threads, forloop);
    if (!body) return jerr_rc(j, MG_ERR_NOMEM, "out of memory");
    if ((rc = read_block(j, body, bts, inputs, n_in, names[0]))) {
        ir_graph_free(body);
        return rc;
    }
    int saves = body->n_outputs; /* read before body is freed: the message needs it */
    if (saves != n_names) {
        ir_graph_free(body);
        return jerr(j, "the kernel saves %d tensor%s but \"names\" lists %d", saves,
                    saves == 1 ? "" : "s", n_names);
    }
    for (int o = 0; o < n_names; o++)
        if (ir_find(j->g, names[o]) >= 0) {
            ir_graph_free(body);
            return jerr(j, "duplicate name '%s'", names[o]);
        }
    int r = ir_add_kernel(j->g, j->ctx, body, inputs, n_in, names, 0, 0);
    return r < 0 ? jfwd(j, r) : MG_OK;
}

/* The line (1-based) of byte off of text. */
static int line_of(const char *text, size_t off) {
    int line = 1;
    for (size_t i = 0; i < off; i++) line += text[i] == '\n';
    return line;
}

/* The offset of the first NUL byte of text[0..len), or of the first \u0000 escape inside a
 * JSON string; len if there is none. cJSON would decode the escape into a C string that ends
 * there, so "X\u0000Y" would read as "X" past every check on names: such text is refused. */
static size_t find_nul(const char *text, size_t len) {
    int in_string = 0;
    for (size_t i = 0; i < len; i++) {
        if (!text[i]) return i;
        if (!in_string) in_string = text[i] == '"';
        else if (text[i] == '"') in_string = 0;
        else if (text[i] == '\\') {
            if (i + 5 < len && !memcmp(text + i + 1, "u0000", 5)) return i;
            i++; /* the escaped character, which may be '"' */
        }
    }
    return len;
}

static int cmp_key(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The first key that occurs twice in one object of the tree v, or NULL; where (cap bytes)
 * gets the path of that object ("tensors[2].block"), written from byte at on (bytes before it
 * hold v's path; a long path is cut). Each object's keys are sorted, so a hostile object of
 * 10^5 keys costs n log n. Recursion is as deep as the tree, which cJSON bounds
 * (CJSON_NESTING_LIMIT, 1000). *oom is set if the sort buffer could not be allocated. */
static const char *dup_key(const cJSON *v, char *where, size_t at, size_t cap, int *oom) {
    int n = cJSON_GetArraySize(v), k = 0;
    const char *dup = NULL;
    if (at >= cap) at = cap - 1;
    where[at] = 0;
    if (cJSON_IsObject(v) && n > 1) {
        const char **keys = base_alloc((size_t)n * sizeof *keys);
        if (!keys) return *oom = 1, NULL;
        for (const cJSON *e = v->child; e; e = e->next) keys[k++] = e->string ? e->string : "";
        qsort(keys, (size_t)n, sizeof *keys, cmp_key);
        for (k = 1; k < n && !dup; k++)
            if (!strcmp(keys[k - 1], keys[k])) dup = keys[k];
        base_free(keys);
        if (dup) return dup;
    }
    k = 0;
    for (const cJSON *e = v->child; e && !dup && !*oom; e = e->next, k++) {
        int w = cJSON_IsObject(v) ? snprintf(where + at, cap - at, "%s%.40s", at ? "." : "",
                                             e->string ? e->string : "")
                                  : snprintf(where + at, cap - at, "[%d]", k);
        dup = dup_key(e, where, at + (size_t)w, cap, oom);
    }
    if (!dup) where[at] = 0;
    return dup;
}

/* The one JSON value of text (nothing but blanks may follow it) into *root, or an error
 * naming the line. A NUL in the text and a key given twice in one object are errors (cJSON
 * would truncate the one and let the first of the others win). */
static mg_status parse_root(const jin *j, const char *text, size_t len, cJSON **root) {
    const char *end = NULL;
    size_t nul = find_nul(text, len);
    *root = NULL;
    if (nul < len)
        return ctx_err(j->ctx, MG_ERR_PARSE, "%s:%d: error: %s at byte %zu (names and strings "
                       "cannot hold NUL characters)", j->file, line_of(text, nul),
                       text[nul] ? "a string holds the escape \\u0000" : "a NUL byte", nul);
    *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!*root && cj_oom) return ctx_err(j->ctx, MG_ERR_NOMEM, "%s: out of memory reading JSON", j->file);
    if (!*root) {
        size_t off = end && end >= text ? (size_t)(end - text) : 0;
        return ctx_err(j->ctx, MG_ERR_PARSE, "%s:%d: error: malformed JSON near byte %zu", j->file,
                       line_of(text, off < len ? off : len), off);
    }
    for (size_t k = end ? (size_t)(end - text) : len; k < len; k++)
        if (!isspace((unsigned char)text[k])) { /* one JSON value per file, nothing after it */
            cJSON_Delete(*root);
            *root = NULL;
            return ctx_err(j->ctx, MG_ERR_PARSE, "%s:%d: error: text after the end of the JSON "
                           "object (byte %zu)", j->file, line_of(text, k), k);
        }
    char where[256] = "";
    int oom = 0;
    const char *dup = dup_key(*root, where, 0, sizeof where, &oom);
    mg_status rc = MG_OK;
    if (oom) rc = ctx_err(j->ctx, MG_ERR_NOMEM, "%s: out of memory reading JSON", j->file);
    else if (dup)
        rc = ctx_err(j->ctx, MG_ERR_PARSE, "%s: key \"%.64s\" given twice in %s%s", j->file,
                     dup, where[0] ? "" : "the top-level object", where);
    if (rc) cJSON_Delete(*root), *root = NULL;
    return rc;
}

/* The top-level fields: "format", an optional "version" 1, "tensors" and "outputs" lists. */
static mg_status check_root(jin *j, const cJSON *root) {
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "version");
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(root, "tensors");
    const cJSON *os = cJSON_GetObjectItemCaseSensitive(root, "outputs");
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, "mugen-program"))
        return jerr(j, "not a mugen program (needs \"format\": \"mugen-program\")");
    if (ver && !cJSON_IsNumber(ver)) return jerr(j, "\"version\" must be the number 1");
    if (cJSON_IsNumber(ver) && ver->valuedouble != 1)
        return jerr(j, "unsupported version %g (this mugen reads version 1)", ver->valuedouble);
    if (!cJSON_IsArray(ts)) return jerr(j, "needs a \"tensors\" list");
    if (!cJSON_IsArray(os) || !cJSON_GetArraySize(os))
        return jerr(j, "needs a non-empty \"outputs\" list");
    return MG_OK;
}

/* The outputs, by name: an output may be any tensor, listed in any order. */
static mg_status read_outputs(jin *j, const cJSON *os) {
    const cJSON *e;
    cJSON_ArrayForEach(e, os) {
        int o = cJSON_IsString(e) ? ir_find(j->g, e->valuestring) : -1;
        if (o < 0)
            return jerr(j, "output %.64s is not a defined tensor",
                        cJSON_IsString(e) ? e->valuestring : "(not a string)");
        int r = ir_add_output(j->g, j->ctx, o);
        if (r < 0) return jfwd(j, r);
    }
    return MG_OK;
}

/* Contract in ir.h. Only the first len bytes are parsed (the text need not end in NUL). On a
 * syntax error cJSON reports where it stopped, and the line is counted up to there. Tensors
 * are read in list order, which must be topological, then outputs by name. The cJSON tree is
 * freed before returning: ir_set_name and ir_add_const copied every string the graph keeps
 * into its arena, so nothing in the graph points into the tree. */
mg_status ir_parse_json(mg_ctx *ctx, const char *text, size_t len, const char *file,
                        ir_graph **out) {
    jin j = {.ctx = ctx, .file = file ? file : "<input>", .idx = -1};
    use_our_allocator();
    cJSON *root;
    mg_status rc = parse_root(&j, text, len, &root);
    if (rc) return rc;
    j.g = ir_graph_new();
    if (!j.g) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    else rc = check_root(&j, root);
    const cJSON *ls = cJSON_GetObjectItemCaseSensitive(root, "lengths"), *l;
    if (!rc && ls && !cJSON_IsArray(ls)) rc = jerr(&j, "\"lengths\" is a list of {\"name\", \"count\", \"max\"}");
    if (!rc && ls)
        cJSON_ArrayForEach(l, ls) {
            const cJSON *nm = cJSON_GetObjectItemCaseSensitive(l, "name");
            int64_t count = 0, max = 0;
            if (!cJSON_IsString(nm) || get_int(l, "count", 1, IR_MAX_DIM, &count) < 1 || get_int(l, "max", 1, IR_MAX_DIM, &max) < 1) {
                rc = jerr(&j, "a lengths entry needs \"name\", \"count\" and \"max\" (integers in [1, 2^31))");
                break;
            }
            int r = ir_add_lengths(j.g, ctx, nm->valuestring, count, max, 0, 0);
            if (r < 0) {
                rc = jfwd(&j, r);
                break;
            }
        }
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(root, "tensors");
    int k = 0;
    /* the first failing tensor stops the walk; its message names tensors[k] and its name */
    for (const cJSON *t = ts ? ts->child : NULL; !rc && t; t = t->next, k++) {
        j.idx = k, j.name = NULL;
        rc = read_tensor(&j, t);
    }
    j.idx = -1;
    if (!rc) rc = read_outputs(&j, cJSON_GetObjectItemCaseSensitive(root, "outputs"));
    cJSON_Delete(root);
    if (rc) {
        ir_graph_free(j.g);
        return rc;
    }
    *out = j.g;
    return MG_OK;
}
