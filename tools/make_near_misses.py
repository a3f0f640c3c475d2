#!/usr/bin/env python3
"""Writes the μGraph test corpus (run once; the output is committed):
  tests/ugraphs/programs/NAME.mu   small f32 programs
  tests/ugraphs/good/NAME.mu       a correct μGraph for each (verified equivalent in tests)
  tests/ugraphs/near/NN_NAME.mu    near misses: valid μGraphs that compute something else,
                                   each a one-place edit of a good one, with its program and
                                   the mistake in the header. run.sh requires every one to be
                                   rejected with a witness AND by the float test.
"""
import os

ROOT = os.path.join(os.path.dirname(__file__), "..", "tests", "ugraphs")

PROGRAMS = {
    "mm": ("input X : f32[64, 64]\ninput W : f32[64, 64]\nO = matmul(X, W)\noutput O\n"),
    "rms_linear": ("input X : f32[4, 64]\ninput W : f32[64, 32]\n"
                   "O = matmul(X / sqrt(sum(sqr(X), dim=1) / 64), W)\noutput O\n"),
    "gated": ("input X : f32[4, 32]\ninput W1 : f32[32, 32]\ninput W2 : f32[32, 32]\n"
              "O = silu(matmul(X, W1)) * matmul(X, W2)\noutput O\n"),
    "lora": ("input X : f32[4, 16]\ninput W : f32[16, 32]\ninput A : f32[16, 4]\ninput B : f32[4, 32]\n"
             "O = matmul(X, W) + matmul(matmul(X, A), B)\noutput O\n"),
    "ntrans": ("input X : f32[2, 32]\ninput H : f32[2, 32]\ninput alpha : f32[2, 32]\n"
               "O = rmsnorm(X + alpha * rmsnorm(H - X, dim=1), dim=1)\noutput O\n"),
    "flash": ("input Q : f32[2, 8, 4]\ninput K : f32[2, 4, 32]\ninput V : f32[2, 32, 4]\n"
              "S = exp(matmul(Q, K))\nO = matmul(S / sum(S, dim=2), V)\noutput O\n"),
}

GOOD = {
    "mm": """O = kernel(X, W, grid=[4], forloop=4) {
    x = iter(X, fmap=1)
    w = iter(W, imap=[1], fmap=0)
    save(accum(matmul(x, w)), omap=[1])
}""",
    "mm2d": """O = kernel(X, W, grid=[4, 4], forloop=4) {
    x = iter(X, imap=[-1, 0], fmap=1)
    w = iter(W, imap=[1], fmap=0)
    save(accum(matmul(x, w)), omap=[1, 0])
}""",
    "rms_linear": """O = kernel(X, W, grid=[2], forloop=4) {
    x = iter(X, fmap=1)
    w = iter(W, imap=[1], fmap=0)
    m = accum(matmul(x, w))
    s = accum(sum(sqr(x), dim=1))
    save(m / sqrt(s / 64), omap=[1])
}""",
    "gated": """O = kernel(X, W1, W2, grid=[2], forloop=2) {
    x = iter(X, fmap=1)
    a = iter(W1, imap=[1], fmap=0)
    b = iter(W2, imap=[1], fmap=0)
    p = accum(matmul(x, a))
    q = accum(matmul(x, b))
    save(silu(p) * q, omap=[1])
}""",
    "lora": """O = kernel(X, W, A, B, grid=[2], forloop=1) {
    x = iter(X)
    w = iter(W, imap=[1])
    a = iter(A)
    b = iter(B, imap=[1])
    z = concat(x, matmul(x, a), dim=1)
    v = concat(w, b, dim=0)
    save(accum(matmul(z, v)), omap=[1])
}""",
    "lora2": """O = kernel(X, W, A, B, grid=[2], forloop=1) {
    x = iter(X)
    w = iter(W, imap=[1])
    a = iter(A)
    b = iter(B, imap=[1])
    save(accum(matmul(x, w) + matmul(matmul(x, a), b)), omap=[1])
}""",
    "ntrans": """O = kernel(X, H, alpha, grid=[2], forloop=1) {
    x = iter(X, imap=[0])
    h = iter(H, imap=[0])
    a = iter(alpha, imap=[0])
    d = h - x
    y = x + a * (d / sqrt(sum(sqr(d), dim=1) / 32))
    save(accum(y / sqrt(sum(sqr(y), dim=1) / 32)), omap=[0])
}""",
    "flash": """P, D = kernel(Q, K, V, grid=[2, 4], forloop=2) {
    q = iter(Q, imap=[0])
    k = iter(K, imap=[0, 2], fmap=2)
    v = iter(V, imap=[0, 1], fmap=1)
    e = exp(matmul(q, k))
    p = accum(matmul(e, v))
    s = accum(sum(e, dim=2))
    save(reshape(p, shape=[1, 8, 1, 4]), omap=[0, 2])
    save(s, omap=[0, 2])
}
O = kernel(P, D, grid=[2], forloop=1) {
    p = iter(P, imap=[0])
    d = iter(D, imap=[0])
    num = reshape(sum(p, dim=2), shape=[1, 8, 4])
    save(accum(num / sum(d, dim=2)), omap=[0])
}""",
}
PROGRAM_OF = {"mm2d": "mm", "lora2": "lora"}

# (good μGraph, old text, new text, what is wrong)
NEAR = [
    ("mm", "w = iter(W, imap=[1], fmap=0)", "w = iter(W, imap=[0], fmap=1)", "imap on the wrong dim: blocks split W's rows, the loop its columns"),
    ("mm", "x = iter(X, fmap=1)\n    w = iter(W, imap=[1], fmap=0)", "x = iter(X)\n    w = iter(W, imap=[1])", "replicate where it should partition: each iteration loads the whole X and W, so every term is counted 4 times"),
    ("mm", "save(accum(matmul(x, w)), omap=[1])", "save(accum(matmul(x, w) * 2), omap=[1])", "a stray factor inside the loop"),
    ("mm2d", "matmul(x, w)", "matmul(w, x)", "swapped operands"),
    ("mm2d", "omap=[1, 0]", "omap=[0, 1]", "omap swapped: blocks write their tiles to transposed positions"),
    ("mm2d", "x = iter(X, imap=[-1, 0], fmap=1)", "x = iter(X, imap=[0, -1], fmap=1)", "imap sends the wrong grid dim: block (bx, by) reads X's rows of bx instead of by"),
    ("mm2d", "w = iter(W, imap=[1], fmap=0)", "w = iter(W, imap=[-1, 1], fmap=0)", "grid covers only part of W: blocks along x all read the same 16 columns"),
    ("rms_linear", "s / 64", "s / 32", "wrong divisor (mean over 32, not 64)"),
    ("rms_linear", "save(m / sqrt(s / 64), omap=[1])", "save(m, omap=[1])", "missing division by the RMS"),
    ("rms_linear", "m / sqrt(s / 64)", "m * sqrt(s / 64)", "multiplies by the RMS instead of dividing"),
    ("rms_linear", "sqrt(s / 64)", "(s / 64)", "missing sqrt"),
    ("rms_linear", "sum(sqr(x), dim=1)", "sum(x, dim=1)", "sums X instead of its squares"),
    ("rms_linear", "s = accum(sum(sqr(x), dim=1))", "s = sqr(accum(sum(x, dim=1)))", "accumulator in the wrong place: squares the accumulated sum instead of accumulating squares"),
    ("rms_linear", "m = accum(matmul(x, w))\n    s = accum(sum(sqr(x), dim=1))\n    save(m / sqrt(s / 64), omap=[1])",
     "m = accum(matmul(x, w) / sqrt(sum(sqr(x), dim=1) / 64))\n    save(m, omap=[1])",
     "accumulator in the wrong place: each iteration divides by the RMS of its own 16 columns"),
    ("rms_linear", "s = accum(sum(sqr(x), dim=1))\n    save(m / sqrt(s / 64), omap=[1])",
     "s = accum(sqrt(sum(sqr(x), dim=1) / 64))\n    save(m / s, omap=[1])",
     "accumulator in the wrong place: sums per-iteration RMS values"),
    ("rms_linear", "sum(sqr(x), dim=1)", "sum(sqr(x), dim=0)", "wrong reduction dim: sums over rows, not columns"),
    ("rms_linear", "m = accum(matmul(x, w))", "m = accum(matmul(x, w) + 1)", "adds one per iteration"),
    ("rms_linear", "save(m / sqrt(s / 64), omap=[1])", "save(m / sqrt(s / 64 + 1), omap=[1])", "an epsilon of 1 the program does not have"),
    ("rms_linear", "s = accum(sum(sqr(x), dim=1))", "y = iter(X)\n    s = accum(sum(sqr(y), dim=1))",
     "for-loop range does not match the tile: the norm's iterator does not advance, so the loop adds the whole sum of squares 4 times"),
    ("gated", "save(silu(p) * q, omap=[1])", "save(silu(q) * p, omap=[1])", "swapped operands: the gate uses W2"),
    ("gated", "p = accum(matmul(x, a))\n    q = accum(matmul(x, b))\n    save(silu(p) * q, omap=[1])",
     "p = accum(silu(matmul(x, a)))\n    q = accum(matmul(x, b))\n    save(p * q, omap=[1])",
     "accumulator in the wrong place: silu of each partial product"),
    ("gated", "a = iter(W1, imap=[1], fmap=0)", "a = iter(W2, imap=[1], fmap=0)", "reads W2 where W1 belongs"),
    ("gated", "save(silu(p) * q, omap=[1])", "save(exp(p) * q, omap=[1])", "exp instead of silu"),
    ("gated", "save(silu(p) * q, omap=[1])", "save(p * q, omap=[1])", "missing silu"),
    ("gated", "a = iter(W1, imap=[1], fmap=0)", "a = iter(W1, imap=[0], fmap=1)", "imap on the wrong dim of W1"),
    ("gated", "save(silu(p) * q, omap=[1])", "save(silu(p) + q, omap=[1])", "adds instead of multiplying"),
    ("lora", "v = concat(w, b, dim=0)", "v = concat(b, w, dim=0)", "concat in the wrong order on one side: W meets X A"),
    ("lora", "save(accum(matmul(z, v)), omap=[1])", "save(accum(matmul(x, w)), omap=[1])", "drops the low-rank branch"),
    ("lora", "z = concat(x, matmul(x, a), dim=1)", "z = concat(x, matmul(x, a) * 2, dim=1)", "low-rank branch scaled twice"),
    ("lora2", "matmul(x, w) + matmul(matmul(x, a), b)", "matmul(x, w) - matmul(matmul(x, a), b)", "subtracts the low-rank branch"),
    ("lora2", "matmul(matmul(x, a), b)", "matmul(x, matmul(a, b)) * 0 + matmul(x, w)", "counts X W twice and drops the branch"),
    ("ntrans", "d = h - x", "d = x - h", "swapped operands of the difference"),
    ("ntrans", "y = x + a", "y = h + a", "adds to H instead of X"),
    ("ntrans", "y = x + a * (d / sqrt(sum(sqr(d), dim=1) / 32))", "y = x + a * d", "drops the inner RMSNorm"),
    ("ntrans", "save(accum(y / sqrt(sum(sqr(y), dim=1) / 32)), omap=[0])", "save(accum(y / sqrt(sum(sqr(d), dim=1) / 32)), omap=[0])", "outer norm of the wrong tensor"),
    ("ntrans", "a = iter(alpha, imap=[0])", "a = iter(H, imap=[0])", "reads H where alpha belongs"),
    ("ntrans", "sum(sqr(d), dim=1)", "sum(sqr(d), dim=0)", "wrong reduction dim: no reduction at all over a 1-row tile"),
    ("ntrans", "sum(sqr(y), dim=1) / 32", "sum(sqr(y), dim=1) / 16", "wrong divisor in the outer norm"),
    ("ntrans", "x = iter(X, imap=[0])", "x = iter(X, imap=[0])\n    z = iter(H, imap=[0])", "reads H twice: d = H - H is zero and the inner norm divides by zero", ),
    ("flash", "e = exp(matmul(q, k))", "e = matmul(q, k)", "missing exp"),
    ("flash", "save(accum(num / sum(d, dim=2)), omap=[0])", "save(accum(num / d), omap=[0])", "combine divides by each split's own sum"),
    ("flash", "s = accum(sum(e, dim=2))", "s = accum(sum(e, dim=1))", "wrong reduction dim of the exp-sum"),
    ("flash", "save(accum(num / sum(d, dim=2)), omap=[0])", "save(accum(num), omap=[0])", "missing division in the combine"),
    ("flash", "p = accum(matmul(e, v))", "p = accum(matmul(e, v) * 2)", "partial products doubled"),
    ("flash", "num = reshape(sum(p, dim=2), shape=[1, 8, 4])", "num = reshape(sum(p, dim=2), shape=[1, 8, 4]) * 4", "multiplies the combined product by the split count"),
]

# Two near misses above need a follow-up edit to make them wrong (the new iterator is used).
FOLLOW = {
    ("ntrans", 38): ("d = h - x", "d = h - z"),
}


def main():
    for sub in ("programs", "good", "near"):
        os.makedirs(os.path.join(ROOT, sub), exist_ok=True)
    for name, text in PROGRAMS.items():
        with open(os.path.join(ROOT, "programs", name + ".mu"), "w") as f:
            f.write("# " + name + ": a small program for the μGraph tests\n" + text)
    heads = {}
    for name, body in GOOD.items():
        prog = PROGRAM_OF.get(name, name)
        inputs = "".join(l + "\n" for l in PROGRAMS[prog].splitlines() if l.startswith("input"))
        heads[name] = inputs
        with open(os.path.join(ROOT, "good", name + ".mu"), "w") as f:
            f.write("# program: tests/ugraphs/programs/%s.mu\n%s%s\noutput O\n" % (prog, inputs, body))
    for i, (good, old, new, what) in enumerate(NEAR):
        body = GOOD[good]
        assert old in body, (good, old)
        body = body.replace(old, new, 1)
        key = (good, i)
        if key in FOLLOW:
            a, b = FOLLOW[key]
            assert a in body, (good, a)
            body = body.replace(a, b, 1)
        prog = PROGRAM_OF.get(good, good)
        with open(os.path.join(ROOT, "near", "%02d_%s.mu" % (i, good)), "w") as f:
            f.write("# program: tests/ugraphs/programs/%s.mu\n# near miss of tests/ugraphs/good/%s.mu: %s\n%s%s\noutput O\n"
                    % (prog, good, what, heads[good], body))


main()
