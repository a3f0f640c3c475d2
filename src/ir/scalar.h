/* scalar: the float meaning of each elementwise operator of ops.def, written once (docs/ir.md).
 *
 * The float reference evaluator (eval/feval.c) computes with these in double; the code
 * generators embed this text in the preludes of the generated C and CUDA, which compute in
 * float. So it is plain C99 that is also valid CUDA: macros only, no includes, no library
 * calls of its own. T is the scalar type. EXP is the exponential, a parameter because each
 * target picks its own deliberately: libm's exp in the reference, in C a polynomial within
 * 1 ulp of expf that loops vectorise (codegen/c/lib.h), and in CUDA __expf or the ex2.approx
 * instruction, whose errors stay far inside the f16/bf16 tolerances.
 * exp and sqrt are the target's own functions, so they have no macro here.
 *
 * Special values follow IEEE arithmetic through each formula: NaN in gives NaN out and
 * infinities propagate, so silu(+inf) = +inf but silu(-inf) = -inf / +inf = NaN, and a zero's
 * sign survives where the formula keeps it (sqr(-0) = +0, silu(-0) = -0). relu is max(x, 0)
 * except that NaN stays NaN: relu(NaN) = NaN, relu(-inf) = +0, relu(-0) = +0. tests/unit/
 * test_eval.c checks NaN, +inf, -inf and -0 through every operator. */
#ifndef MG_SCALAR_H
#define MG_SCALAR_H

#define MG_S_ADD(a, b) ((a) + (b))
#define MG_S_SUB(a, b) ((a) - (b))
#define MG_S_MUL(a, b) ((a) * (b))
/* Division by zero follows IEEE: +-inf, or NaN for 0 / 0. CUDA divides approximately
 * (__fdividef, 2 ulp) by the same deliberate choice as its exp. */
#define MG_S_DIV(a, b) ((a) / (b))
#define MG_S_SQR(x) ((x) * (x))
/* silu(x) = x / (1 + exp(-x)) */
#define MG_S_SILU(T, EXP, x) ((x) / ((T)1 + EXP(-(x))))
/* x > 0 is false for NaN, -0 and -inf; x != x is true only for NaN, which stays NaN */
#define MG_S_RELU(T, x) ((x) > (T)0 || (x) != (x) ? (x) : (T)0)
/* One step of max's reduction: the running value a and the next element b. NaN stays NaN (the
 * first one met), and a is kept on ties (so of -0 and +0 the first). */
#define MG_S_MAX(a, b) ((b) > (a) || ((b) != (b) && (a) == (a)) ? (b) : (a))

#endif
