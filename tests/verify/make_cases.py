#!/usr/bin/env python3
"""Writes the adversarial verifier corpus (run once from the repo root; the output is committed):
  tests/verify/programs/NAME.mu   small programs (f32 unless the case needs f16)
  tests/verify/cases/NAME.mu      one pair each: a μGraph (or plain program) with header lines
                                  # program: tests/verify/programs/X.mu
                                  # expect: 0 | 3 | 5     (mugen verify's exit status)
                                  # class: CLASS
                                  # why: what the case is aimed at
Expected verdicts hold by construction (over the reals and in floating point), NOT by what
any build of mugen answers. The constants aimed at the old fixed primes
q = 2147483543, p = 2q + 1 = 4294967087 are computed below, not typed in.
"""
import os
from fractions import Fraction as F

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)))
Q = 2147483543
P = 2 * Q + 1
N = P * Q                       # 9223371137059149241 < 2^63
INT64_MAX = 2**63 - 1


def dec(num, e):
    """num / 10^e as an exact decimal literal (the parser's limits: |num| <= INT64_MAX, e <= 18)."""
    assert abs(num) <= INT64_MAX and 0 <= e <= 18
    s = str(abs(num)).rjust(e + 1, "0")
    lit = s[:len(s) - e] + ("." + s[len(s) - e:] if e else "")
    if "." in lit:
        lit = lit.rstrip("0").rstrip(".")
    return ("-" if num < 0 else "") + lit


def res(lit, m):
    f = F(lit)
    return f.numerator * pow(f.denominator, -1, m) % m


def congruent_to(t, e):
    """A decimal c = t - N/10^e (real difference N/10^e) with c = t mod p and mod q."""
    num = int(F(t) * 10**e) - N
    lit = dec(num, e)
    assert res(lit, P) == res(str(t), P) and res(lit, Q) == res(str(t), Q)
    return lit


# c = t (mod p, q), real value t - 9.2233...
C1_18 = congruent_to(1, 18)       # -8.223371137059149241 = 1
C1_17 = congruent_to(1, 17)       # -91.23371137059149241 = 1
C1_16 = congruent_to(1, 16)       # -921.3371137059149241 = 1
C10 = congruent_to(10, 18)        # 0.776628862940850759 = 10
C9 = congruent_to(9, 18)          # -0.223371137059149241 = 9
CHALF = congruent_to("0.5", 18)   # -8.723371137059149241 = 1/2
C3 = congruent_to(3, 18)          # -6.223371137059149241 = 3
CM1 = dec(N - 10**18, 18)         # 8.223371137059149241 = -1
assert res(CM1, P) == P - 1 and res(CM1, Q) == Q - 1
Z_PQ = dec(N, 18)                 # 9.223371137059149241 = 0 mod p and mod q
assert res(Z_PQ, P) == 0 and res(Z_PQ, Q) == 0
Z_P = dec(P, 9)                   # 4.294967087 = 0 mod p only
Z_P2 = dec(2 * P, 9)              # 8.589934174 = 0 mod p
assert res(Z_P, P) == 0 and res(Z_P, Q) != 0 and res(Z_P2, P) == 0
Z_Q = dec(Q, 9)                   # 2.147483543 = 0 mod q only
Z_Q10 = dec(Q, 10)                # 0.2147483543 = 0 mod q
Z_Q8 = dec(Q, 8)                  # 21.47483543 = 0 mod q
Z_Qhalf = dec(5 * Q, 10)          # 1.0737417715 = q/2e9 = 0 mod q
assert all(res(z, Q) == 0 and res(z, P) != 0 for z in (Z_Q, Z_Q10, Z_Q8, Z_Qhalf))
assert F(Z_Qhalf) * 2 == F(Z_Q)


def field_sqrt_sign(a, m):
    """+1 if the power map x^((m+1)/4) sends a^2 to a, -1 if to -a."""
    v = res(str(a), m)
    r = pow(v * v % m, (m + 1) // 4, m)
    return 1 if r == v else -1


PROGRAMS = {}
CASES = []


def prog(name, text):
    PROGRAMS[name] = text.strip() + "\n"
    return name


def case(name, program, expect, klass, why, body):
    CASES.append((name, program, expect, klass, why, body.strip() + "\n"))


def io_of(program):
    """The program's input and output lines (the μGraph repeats its interface)."""
    lines = PROGRAMS[program].splitlines()
    ins = "\n".join(l for l in lines if l.startswith("input "))
    outs = "\n".join(l for l in lines if l.startswith("output "))
    return ins, outs


def pair(name, program, expect, klass, why, stmts):
    ins, outs = io_of(program)
    case(name, program, expect, klass, why, ins + "\n" + stmts.strip() + "\n" + outs)


# ---- the cases -------------------------------------------------------------------

# Programs. Inputs of the f32 programs are what the verifier draws; shapes are small so that a
# verdict takes milliseconds.
prog("ident", "input X : f32[8, 16]\nO = X * 1\noutput O")
prog("scale10", "input X : f32[4, 4, 8]\nO = X * 10\noutput O")
prog("half", "input X : f32[64]\nO = X / 2\noutput O")
prog("neg", "input X : f32[2, 32]\nO = 0 - X\noutput O")
prog("nine", "input X : f32[8, 16]\nO = X * 9\noutput O")
prog("mm", "input X : f32[16, 32]\ninput W : f32[32, 16]\nO = matmul(X, W)\noutput O")
prog("mm10", "input X : f32[16, 32]\ninput W : f32[32, 16]\nO = matmul(X, W) * 10\noutput O")
prog("add2", "input X : f32[8, 16]\ninput Y : f32[8, 16]\nO = X + Y\noutput O")
prog("mulxy", "input X : f32[8, 16]\ninput Y : f32[8, 16]\nO = X * Y\noutput O")
prog("shift3", "input X : f32[8, 16]\nO = X + 3\noutput O")
prog("silu1", "input X : f32[4, 32]\nO = silu(X)\noutput O")
prog("exp1", "input X : f32[8, 16]\nO = exp(X)\noutput O")
prog("expoff", "input X : f32[2, 64]\nO = exp(X + 1)\noutput O")
prog("one", "input X : f32[8, 16]\nO = X * 0 + 1\noutput O")
prog("smax", "# the Lax part of a max-subtracting softmax: M is the row max in the full program\n"
     "input S : f32[4, 32]\ninput M : f32[4, 1]\nE = exp(S - M)\nO = E / sum(E, dim=1)\noutput O")
prog("tempsm", "input S : f32[4, 32]\ninput M : f32[4, 1]\nE = exp((S - M) / %s)\nO = E / sum(E, dim=1)\noutput O" % Z_Q)
prog("gated", "input X : f32[4, 32]\ninput W1 : f32[32, 32]\ninput W2 : f32[32, 32]\n"
     "O = silu(matmul(X, W1)) * matmul(X, W2)\noutput O")
prog("attn", "input Q : f32[2, 8, 4]\ninput K : f32[2, 4, 32]\ninput V : f32[2, 32, 4]\n"
     "S = exp(matmul(Q, K))\nO = matmul(S / sum(S, dim=2), V)\noutput O")
prog("rms16", "input X : f32[4, 16]\nO = X / sqrt(sum(sqr(X), dim=1) / 16)\noutput O")
prog("rmsq", "input X : f32[16, 16]\nO = X / sqrt(sum(sqr(X), dim=1) / 16)\noutput O")
for n, rows in ((100, 4), (25, 2), (49, 4), (121, 2), (64, 4), (32, 4)):
    prog("rms%d" % n, "input X : f32[%d, %d]\nO = X / sqrt(sum(sqr(X), dim=1) / %d)\noutput O" % (rows, n, n))
prog("divp", "input X : f32[8, 16]\nO = X / %s\noutput O" % Z_P)
prog("divpq", "input X : f32[4, 8]\nO = X / %s\noutput O" % Z_PQ)
prog("expdivq", "input X : f32[4, 16]\nO = exp(X / %s)\noutput O" % Z_Q)
prog("rmsdivp", "input X : f32[4, 16]\nO = X / sqrt(sum(sqr(X), dim=1) / %s)\noutput O" % Z_P)
prog("mmdivpq", "input X : f32[16, 32]\ninput W : f32[32, 16]\nO = matmul(X, W) / %s\noutput O" % Z_PQ)
prog("siludivq", "input X : f32[4, 32]\nO = silu(X / %s) * X\noutput O" % Z_Q)
prog("cat", "input X : f32[8, 8]\ninput Y : f32[8, 8]\nO = concat(X, Y * 1000000, dim=1)\noutput O")
prog("catmm", "input X : f32[4, 16]\ninput A : f32[4, 16]\ninput B : f32[16, 16]\n"
     "O = concat(X, matmul(A, B) * 100000, dim=0)\noutput O")
prog("onebig", "input X : f32[127]\ninput Y : f32[1]\nO = reshape(concat(X * 100000, Y, dim=0), shape=[8, 16])\noutput O")
prog("onecat", "input X : f32[127]\ninput Y : f32[1]\nO = reshape(concat(X * 2, Y * 2, dim=0), shape=[8, 16])\noutput O")
prog("expbig", "input X : f32[8, 16]\nO = exp(X * 1000)\noutput O")
prog("negexpbig", "input X : f32[8, 16]\nO = 0 - exp(X * 1000)\noutput O")
prog("bigmul", "input X : f32[4, 8]\nO = X * 1e18 * 1e18 * 1e18\noutput O")
prog("mmbig", "input X : f32[16, 32]\ninput W : f32[32, 16]\nO = matmul(X, W) * 1e18 * 1e18 * 1e18\noutput O")
prog("exp16", "input X : f16[8, 16]\nO = exp(X * 20)\noutput O")
prog("mlp16", "# LLaMA-like MLP in f16; the output overflows f16 for about half its elements on inputs in [-1, 1)\n"
     "input X : f16[1, 256]\ninput W1 : f16[256, 704]\ninput W3 : f16[256, 704]\ninput W2 : f16[704, 256]\n"
     "O = matmul(silu(matmul(X, W1)) * matmul(X, W3), W2) * 300\noutput O")
prog("var", "input X : f32[4, 32]\nC = X - sum(X, dim=1) / 32\nO = sum(sqr(C), dim=1) / 32\noutput O")
prog("rowsum", "input X : f32[8, 32]\nO = sum(X, dim=1)\noutput O")
prog("bcast", "input X : f32[8, 8]\ninput B : f32[1, 8]\nO = X + B\noutput O")
prog("qkn100", "# QKNorm over a head dim of 100 (sqrt(100) is -10 in the old fields), scores scaled by 1/10\n"
     "input Q : f32[1, 4, 100]\ninput K : f32[1, 100, 8]\ninput V : f32[1, 8, 4]\n"
     "Qn = Q / sqrt(sum(sqr(Q), dim=2) / 100)\nKn = K / sqrt(sum(sqr(K), dim=1) / 100)\n"
     "S = exp(matmul(Qn, Kn) / 10)\nO = matmul(S / sum(S, dim=2), V)\noutput O")
prog("qkn16", "input Q : f32[2, 8, 16]\ninput K : f32[2, 16, 32]\ninput V : f32[2, 32, 16]\n"
     "Qn = Q / sqrt(sum(sqr(Q), dim=2) / 16)\nKn = K / sqrt(sum(sqr(K), dim=1) / 16)\n"
     "S = exp(matmul(Qn, Kn) / 4)\nO = matmul(S / sum(S, dim=2), V)\noutput O")
for c in ("100", "6.25", "2.25", "0.01"):
    prog("sqc_" + c.replace(".", "_"), "input X : f32[8, 16]\nO = sqrt(sqr(X) * %s)\noutput O" % c)
prog("sqc_2", "input X : f32[8, 16]\nO = sqrt(sqr(X) * 2 + 1)\noutput O")

# ---- crafted constants: c = t (mod p and mod q) but c != t over the reals ----
K = "const"
pair("const_ident_m8", "ident", 3, K, "c = %s is 1 mod p and mod q (c = 1 - pq/10^18): X vs c*X, a real error of 9.2x" % C1_18,
     "O = X * %s" % C1_18)
pair("const_scale10", "scale10", 3, K, "c = %s is 10 mod p, q: 13x too small, 3-d shape" % C10, "O = X * %s" % C10)
pair("const_half", "half", 3, K, "c = %s is 1/2 mod p, q: negative and 17x too big, 1-d shape" % CHALF, "O = X * %s" % CHALF)
pair("const_neg", "neg", 3, K, "c = %s is -1 mod p, q: 8.2x with the wrong sign" % CM1, "O = X * %s" % CM1)
pair("const_nine", "nine", 3, K, "c = %s is 9 mod p, q: 40x too small, negated" % C9, "O = X * %s" % C9)
pair("const_mm_e17", "mm", 3, K, "c = %s (1 - pq/10^17) is 1 mod p, q, scaling X inside a matmul" % C1_17,
     "O = matmul(X * %s, W)" % C1_17)
pair("const_add_e16", "add2", 3, K, "c = %s (1 - pq/10^16) is 1 mod p, q, scaling one addend" % C1_16, "O = X + Y * %s" % C1_16)
pair("const_shift3", "shift3", 3, K, "additive c = %s is 3 mod p, q: X + c is X + 3 - 9.2" % C3, "O = X + %s" % C3)
pair("const_zero_add", "ident", 3, K, "adds c = %s = pq/10^18, which is 0 mod p and mod q" % Z_PQ, "O = X + %s" % Z_PQ)
pair("const_zero_term", "add2", 3, K, "an extra term %s*X whose constant is 0 mod p and mod q" % Z_PQ, "O = X + Y + X * %s" % Z_PQ)
pair("const_silu", "silu1", 3, K, "silu(c*X) with c = %s = 1 mod p and mod q: both parts of silu agree in the old fields" % C1_18,
     "O = silu(X * %s)" % C1_18)
pair("const_exp", "exp1", 3, K, "exp(c*X) with c = %s = 1 mod q: exp reads only the q part" % C1_18, "O = exp(X * %s)" % C1_18)
pair("const_exp_qonly", "exp1", 3, K, "exp(c*X) with c = %s = 1 mod q but not mod p: exp reads only the q part" % dec(Q + 10**9, 9),
     "O = exp(X * %s)" % dec(Q + 10**9, 9))
pair("const_softmax_den", "smax", 3, K, "denominator scaled by c = %s = 1 mod p, q: softmax off by -8.2x" % C1_18,
     "E = exp(S - M)\nO = E / (sum(E, dim=1) * %s)" % C1_18)
pair("const_rms_inner", "rms16", 3, K, "c = %s = 1 mod p, q inside the sum of squares: the norm is 8.2x too large" % C1_18,
     "O = X / sqrt(sum(sqr(X * %s), dim=1) / 16)" % C1_18)
pair("const_kernel_mm", "mm", 3, K, "c = %s = 1 mod p, q inside a kernel's block graph (per iteration)" % C1_18, """
O = kernel(X, W, grid=[2], forloop=4) {
    x = iter(X, fmap=1)
    w = iter(W, imap=[1], fmap=0)
    save(accum(matmul(x, w) * %s), omap=[1])
}""" % C1_18)
pair("const_attn_scores", "attn", 3, K, "scores scaled by c = %s = 1 mod q inside exp: a different softmax" % C1_18,
     "S = exp(matmul(Q, K) * %s)\nO = matmul(S / sum(S, dim=2), V)" % C1_18)

# ---- shifts inside exp that are 0 mod q ----
K = "expshift"
pair("shift_exp_q", "exp1", 3, K, "exp(X + %s) with the shift = q/10^9 = 0 mod q: e^2.147 = 8.6x" % Z_Q, "O = exp(X + %s)" % Z_Q)
pair("shift_exp_mq", "exp1", 3, K, "exp(X - %s): the shift is 0 mod q, a factor 1/8.6" % Z_Q, "O = exp(X - %s)" % Z_Q)
pair("shift_exp_q10", "exp1", 3, K, "exp(X + %s) = q/10^10: a factor 1.24" % Z_Q10, "O = exp(X + %s)" % Z_Q10)
pair("shift_exp_2q", "exp1", 3, K, "exp(X + %s) = 2q/10^9: a factor 73" % dec(2 * Q, 9), "O = exp(X + %s)" % dec(2 * Q, 9))
pair("shift_exp_off", "expoff", 3, K, "exp(X + %s) for exp(X + 1): the constants differ by q/10^10 = 0 mod q" % dec(10**10 + Q, 10),
     "O = exp(X + %s)" % dec(10**10 + Q, 10))
pair("shift_exp_one", "one", 3, K, "exp(X * %s) against the constant 1: the exponent is 0 mod q for every X" % Z_Q,
     "O = exp(X * %s)" % Z_Q)
pair("shift_softmax_num", "smax", 3, K, "numerator shifted by %s (0 mod q), denominator not: softmax 8.6x too large" % Z_Q,
     "O = exp(S - M + %s) / sum(exp(S - M), dim=1)" % Z_Q)
pair("shift_softmax_both", "smax", 0, K, "shift %s (0 mod q) in numerator and denominator: cancels over the reals, equivalent" % Z_Q,
     "E = exp(S - M + %s)\nO = E / sum(E, dim=1)" % Z_Q)
pair("shift_attn_num", "attn", 3, K, "attention numerator shifted by %s (0 mod q) inside exp, denominator not" % Z_Q10,
     "S = exp(matmul(Q, K))\nO = matmul(exp(matmul(Q, K) + %s) / sum(S, dim=2), V)" % Z_Q10)
pair("shift_attn_both", "attn", 0, K, "scores shifted by %s (0 mod q) in every exp term: the softmax is unchanged" % Z_Q10,
     "S = exp(matmul(Q, K) + %s)\nO = matmul(S / sum(S, dim=2), V)" % Z_Q10)

# ---- field zeros: constants that are 0 mod p or mod q. Correct pairs must be accepted ----
K = "fieldzero"
pair("zero_divp_self", "divp", 0, K, "X / %s against itself: the divisor is 0 mod p (a field zero, not a real one)" % Z_P, "O = X / %s" % Z_P)
pair("zero_divp_2x", "divp", 0, K, "(X + X) / %s: both divisors 0 mod p, equal over the reals" % Z_P2, "O = (X + X) / %s" % Z_P2)
assert F("2.1474835435") * 2 == F(Z_P)
pair("zero_divp_half", "divp", 0, K, "X * 0.5 / 2.1474835435: divisor p/(2*10^9), 0 mod p", "O = X * 0.5 / 2.1474835435")
pair("zero_divp_near", "divp", 3, K, "X / 4.294967088 against X / %s: relative difference 2.3e-10, invisible to floats, not equal" % Z_P,
     "O = X / 4.294967088")
pair("zero_divpq", "divpq", 0, K, "(X * 2) / (%s * 2): divisor 0 mod p and mod q" % Z_PQ, "O = (X * 2) / (%s * 2)" % Z_PQ)
pair("zero_expdivq_self", "expdivq", 0, K, "exp(X / %s) against itself: the exponent divides by 0 mod q" % Z_Q, "O = exp(X / %s)" % Z_Q)
pair("zero_expdivq_half", "expdivq", 0, K, "exp(X * 0.5 / %s): divisor q/(2*10^9), 0 mod q" % Z_Qhalf, "O = exp(X * 0.5 / %s)" % Z_Qhalf)
pair("zero_expdivq_wrong", "expdivq", 3, K, "exp(X / %s + 0.1): a factor e^0.1 on an exponent that divides by 0 mod q" % Z_Q,
     "O = exp(X / %s + 0.1)" % Z_Q)
pair("zero_tempsm", "tempsm", 0, K, "softmax at temperature %s (0 mod q), rewritten as S/T - M/T" % Z_Q,
     "E = exp(S / %s - M / %s)\nO = E / sum(E, dim=1)" % (Z_Q, Z_Q))
pair("zero_tempsm_rowshift", "tempsm", 0, K, "softmax at temperature %s (0 mod q) with M not divided by it: a per-row shift, so still equal" % Z_Q,
     "E = exp(S / %s - M)\nO = E / sum(E, dim=1)" % Z_Q)
pair("zero_tempsm_wrong", "tempsm", 3, K, "softmax multiplied by the temperature %s (0 mod q) instead of divided: exponent 0 mod q in the old fields" % Z_Q,
     "E = exp((S - M) * %s)\nO = E / sum(E, dim=1)" % Z_Q)
pair("zero_rmsdivp", "rmsdivp", 0, K, "mean of squares over a divisor %s (0 mod p), rewritten with 0.25 and p/(4*10^9)" % Z_P,
     "O = X / sqrt(sum(sqr(X), dim=1) * 0.25 / 1.07374177175)")
pair("zero_mmdivpq_kernel", "mmdivpq", 0, K, "matmul then divide by %s (0 mod p and q) inside a kernel" % Z_PQ, """
O = kernel(X, W, grid=[2], forloop=4) {
    x = iter(X, fmap=1)
    w = iter(W, imap=[1], fmap=0)
    m = accum(matmul(x, w))
    save(m / %s, omap=[1])
}""" % Z_PQ)
pair("zero_siludivq", "siludivq", 0, K, "silu(X / %s) (0 mod q) rewritten as silu(X * 2 / 2q/10^9)" % Z_Q,
     "O = silu(X * 2 / %s) * X" % dec(2 * Q, 9))

# ---- a wrong part of small values beside a much larger part of the same output ----
K = "drown"
pair("drown_cat_const", "cat", 3, K, "concat(c*X, 10^6*Y) with c = %s = 1 mod p, q: the wrong half is 10^6 times smaller" % C1_18,
     "O = concat(X * %s, Y * 1000000, dim=1)" % C1_18)
pair("drown_cat_cancel", "cat", 5, K, "concat((X + 10^7) - 10^7, 10^6*Y): the small half loses all but the integer part in f32",
     "O = concat(X + 10000000 - 10000000, Y * 1000000, dim=1)")
pair("drown_catmm_const", "catmm", 3, K, "concat along rows: c*X with c = %s = 1 mod p, q beside 10^5*A*B" % C1_18,
     "O = concat(X * %s, matmul(A, B) * 100000, dim=0)" % C1_18)
pair("drown_one_const", "onebig", 3, K, "one element Y*c with c = %s = 1 mod p, q among 127 elements 10^5 larger" % C1_18,
     "O = reshape(concat(X * 100000, Y * %s, dim=0), shape=[8, 16])" % C1_18)
pair("drown_one_cancel", "onebig", 5, K, "one element (Y + 10^7) - 10^7 among 127 elements 10^5 larger: f32 keeps only its integer part",
     "O = reshape(concat(X * 100000, Y + 10000000 - 10000000, dim=0), shape=[8, 16])")
pair("drown_one_shift", "onebig", 3, K, "one element Y + 0.5 among 127 elements 10^5 larger: a plain wrong element",
     "O = reshape(concat(X * 100000, Y + 0.5, dim=0), shape=[8, 16])")

# ---- square roots of constants: the power map gives -a for sqrt(a^2) when a is a non-residue ----
K = "sqrt"
for n, rows in ((100, 4), (25, 2), (49, 4), (121, 2), (64, 4)):
    r = int(n ** 0.5)
    sp, sq = field_sqrt_sign(r, P), field_sqrt_sign(r, Q)
    old = ("old fields: sqrt(%d) is %s mod p and %s mod q" % (n, "+%d" % r if sp > 0 else "-%d" % r, "+%d" % r if sq > 0 else "-%d" % r))
    pair("sqrt_rms%d_pos" % n, "rms%d" % n, 0, K, "RMSNorm over %d as %d*X/sqrt(sum(X^2)): equal over the reals (%s)" % (n, r, old),
         "O = X * %d / sqrt(sum(sqr(X), dim=1))" % r)
    pair("sqrt_rms%d_neg" % n, "rms%d" % n, 3, K, "RMSNorm over %d as -%d*X/sqrt(sum(X^2)): the negated result (%s)" % (n, r, old),
         "O = X * -%d / sqrt(sum(sqr(X), dim=1))" % r)
pair("sqrt_rms100_mul", "rms100", 0, K, "RMSNorm over 100 as X/sqrt(sum(X^2) * 0.01): the same root", "O = X / sqrt(sum(sqr(X), dim=1) * 0.01)")
pair("sqrt_rms100_const", "rms100", 0, K, "RMSNorm over 100 as sqrt(100)*X/sqrt(sum(X^2)): sqrt of a constant", "O = X * sqrt(100) / sqrt(sum(sqr(X), dim=1))")
pair("sqrt_rms100_kernel", "rms100", 0, K, "10*X/sqrt(sum(X^2)) in a kernel, rows split over 2 blocks", """
O = kernel(X, grid=[2]) {
    x = iter(X, imap=[0])
    save(accum(x * 10 / sqrt(sum(sqr(x), dim=1))), omap=[0])
}""")
pair("sqrt_rms100_kernel_neg", "rms100", 3, K, "-10*X/sqrt(sum(X^2)) in a kernel: negated RMSNorm", """
O = kernel(X, grid=[2]) {
    x = iter(X, imap=[0])
    save(accum(x * -10 / sqrt(sum(sqr(x), dim=1))), omap=[0])
}""")
pair("sqrt_rms32_half", "rms32", 0, K, "RMSNorm over 32 (not a square) as 4*X/sqrt(sum(X^2)/2)", "O = X * 4 / sqrt(sum(sqr(X), dim=1) / 2)")
pair("sqrt_rms32_half_neg", "rms32", 3, K, "RMSNorm over 32 as -4*X/sqrt(sum(X^2)/2): negated", "O = X * -4 / sqrt(sum(sqr(X), dim=1) / 2)")
pair("sqrt_rms32_mul", "rms32", 0, K, "RMSNorm over 32 as X/sqrt(sum(X^2) * 0.03125)", "O = X / sqrt(sum(sqr(X), dim=1) * 0.03125)")
for c, r in (("100", "10"), ("6.25", "2.5"), ("2.25", "1.5"), ("0.01", "0.1")):
    sp, sq = field_sqrt_sign(r, P), field_sqrt_sign(r, Q)
    old = "old fields: sqrt(%s) is %s%s mod p and %s%s mod q" % (c, "+" if sp > 0 else "-", r, "+" if sq > 0 else "-", r)
    pn = "sqc_" + c.replace(".", "_")
    pair("sqrt_c%s_pos" % c.replace(".", "_"), pn, 0, K, "sqrt(X^2 * %s) as %s*sqrt(X^2) (%s)" % (c, r, old), "O = sqrt(sqr(X)) * %s" % r)
    pair("sqrt_c%s_neg" % c.replace(".", "_"), pn, 3, K, "sqrt(X^2 * %s) as -%s*sqrt(X^2): negated (%s)" % (c, r, old), "O = sqrt(sqr(X)) * -%s" % r)
pair("sqrt_c2_split", "sqc_2", 0, K, "sqrt(2*X^2 + 1) as sqrt(2)*sqrt(X^2 + 0.5): sqrt of a non-square constant",
     "O = sqrt(2) * sqrt(sqr(X) + 0.5)")
pair("sqrt_c2_split_wrong", "sqc_2", 3, K, "sqrt(2*X^2 + 1) as sqrt(2)*sqrt(X^2 + 1): wrong inside the root",
     "O = sqrt(2) * sqrt(sqr(X) + 1)")

# ---- labels: not equivalent over the reals, so exit 3 whichever test catches it ----
K = "label"
pair("label_rms_inner", "rms64", 3, K, "norm of c*X with c = %s = 1 mod p, q: 8.2x off; only a float test stops it in the old fields" % C1_18,
     "O = X / sqrt(sum(sqr(X * %s), dim=1) / 64)" % C1_18)
pair("label_mm10_kernel", "mm10", 3, K, "matmul times c = %s (10 mod p, q) instead of 10, in a 2-d grid kernel" % C10, """
O = kernel(X, W, grid=[2, 2], forloop=2) {
    x = iter(X, imap=[-1, 0], fmap=1)
    w = iter(W, imap=[1], fmap=0)
    m = accum(matmul(x, w))
    save(m * %s, omap=[1, 0])
}""" % C10)
pair("label_gated_kernel", "gated", 3, K, "gated MLP times c = %s (1 mod p, q) after the accumulators" % C1_18, """
O = kernel(X, W1, W2, grid=[2], forloop=2) {
    x = iter(X, fmap=1)
    a = iter(W1, imap=[1], fmap=0)
    b = iter(W2, imap=[1], fmap=0)
    p = accum(matmul(x, a))
    q = accum(matmul(x, b))
    save(silu(p) * q * %s, omap=[1])
}""" % C1_18)
pair("label_softmax_half", "smax", 3, K, "E*0.5/(sum(E)*c) with c = %s (1/2 mod p, q): negative, 17x smaller" % CHALF,
     "E = exp(S - M)\nO = E * 0.5 / (sum(E, dim=1) * %s)" % CHALF)
pair("label_attn_v", "attn", 3, K, "V scaled by c = %s (1 mod p, q) in the attention's second matmul" % C1_18,
     "S = exp(matmul(Q, K))\nO = matmul(S / sum(S, dim=2), V * %s)" % C1_18)

# ---- infinities: equal infinities are equal ----
K = "inf"
pair("inf_exp_self", "expbig", 0, K, "exp(1000*X) against itself: +inf wherever X > 0.0888, in both", "O = exp(X * 1000)")
pair("inf_exp_split", "expbig", 0, K, "exp(500*X + 500*X): +inf where the program is +inf", "O = exp(X * 500 + X * 500)")
pair("inf_negexp", "negexpbig", 0, K, "-exp(1000*X) as exp(1000*X) * -1: -inf in both", "O = exp(X * 1000) * -1")
pair("inf_bigmul", "bigmul", 0, K, "X * 10^54 (outside f32) as X * 10^18 * (10^18 * 10^18): +-inf in both",
     "O = X * 1e18 * (1e18 * 1e18)")
pair("inf_mmbig_kernel", "mmbig", 0, K, "matmul times 10^54 in a kernel: every element +-inf in f32, as in the program", """
O = kernel(X, W, grid=[2], forloop=4) {
    x = iter(X, fmap=1)
    w = iter(W, imap=[1], fmap=0)
    m = accum(matmul(x, w))
    save(m * 1e18 * 1e18 * 1e18, omap=[1])
}""")
pair("inf_exp16_self", "exp16", 0, K, "f16 exp(20*X) against itself: overflows f16 for X > 0.555 in the program's own reference", "O = exp(X * 20)")
pair("inf_exp16_split", "exp16", 0, K, "f16 exp(20*X) as exp(10*X) * exp(10*X)", "O = exp(X * 10) * exp(X * 10)")
case("inf_mlp16_self", "mlp16", 0, K, "LLaMA-like MLP in f16 against itself: its own reference overflows f16 on inputs in [-1, 1)",
     PROGRAMS["mlp16"].split("\n", 1)[1])
pair("inf_mlp16_kernels", "mlp16", 0, K, "the same MLP as two kernels (gate+up fused, then down): overflows where the program does", """
H = kernel(X, W1, W3, grid=[8], forloop=8) {
    x = iter(X, fmap=1)
    a = iter(W1, imap=[1], fmap=0)
    b = iter(W3, imap=[1], fmap=0)
    p = accum(matmul(x, a))
    q = accum(matmul(x, b))
    save(silu(p) * q, omap=[1])
}
O = kernel(H, W2, grid=[4], forloop=8) {
    h = iter(H, fmap=1)
    w = iter(W2, imap=[1], fmap=0)
    m = accum(matmul(h, w))
    save(m * 300, omap=[1])
}""")

# ---- equivalent over the reals, broken in floating point (5), and safe forms (0) ----
K = "float"
pair("float_softmax_plus_m", "smax", 5, K, "exp(S + M) for exp(S - M): equal after normalising, but overflows f32 once S + M > 88.7 (scores around 45 and up)",
     "E = exp(S + M)\nO = E / sum(E, dim=1)")
pair("float_softmax_plus_3m", "smax", 5, K, "exp(S + 3M): overflows (M around +30) or underflows to 0/0 (M around -30) at magnitudes of tens",
     "E = exp(S + M * 3)\nO = E / sum(E, dim=1)")
pair("float_softmax_minus200", "smax", 5, K, "exp(S - M - 200): every term underflows f32 to 0 for |S - M| < 100, so 0/0",
     "E = exp(S - M - 200)\nO = E / sum(E, dim=1)")
pair("float_softmax_minus100", "smax", 5, K, "exp(S - M - 100): subnormal f32 terms (about e^-100 = 3.7e-44) keep a few bits: errors of percents on [-1, 1)",
     "E = exp(S - M - 100)\nO = E / sum(E, dim=1)")
pair("float_cancel_mul", "mulxy", 5, K, "(X + 10^7)*Y - 10^7*Y: f32 rounds X + 10^7 to an integer", "O = (X + 10000000) * Y - Y * 10000000")
pair("float_cancel_add", "ident", 5, K, "(X + 10^7) - 10^7: f32 keeps only the integer part of X", "O = X + 10000000 - 10000000")
pair("float_cancel_var", "var", 5, K, "variance as E[(X+10^4)^2] - E[X+10^4]^2: shift-invariant over the reals, f32 loses it (ulp of 10^8 is 8)",
     "Y = X + 10000\nO = sum(sqr(Y), dim=1) / 32 - sqr(sum(Y, dim=1) / 32)")
pair("float_cancel_rowsum", "rowsum", 5, K, "sum(X + 10^6) - 32*10^6: each term rounded to 1/16, the total to 2",
     "O = sum(X + 1000000, dim=1) - 32000000")
pair("float_cancel_mm", "mm", 5, K, "matmul(X + 10^6, W) - 10^6 * colsum(W): exact over the reals, percent errors in f32",
     "O = matmul(X + 1000000, W) - sum(W, dim=0) * 1000000")
pair("float_safe_shift1", "smax", 0, K, "exp(S - M - 1): a harmless shift, safe counterpart of the -100/-200 cases",
     "E = exp(S - M - 1)\nO = E / sum(E, dim=1)")
pair("float_safe_recip", "smax", 0, K, "E * (1 / sum(E)): the same softmax, no cancellation", "E = exp(S - M)\nO = E * (1 / sum(E, dim=1))")
pair("float_safe_kernel", "smax", 0, K, "the softmax in a kernel, rows split over 4 blocks", """
O = kernel(S, M, grid=[4]) {
    s = iter(S, imap=[0])
    m = iter(M, imap=[0])
    e = exp(s - m)
    save(accum(e / sum(e, dim=1)), omap=[0])
}""")
pair("float_safe_var", "var", 0, K, "variance as mean of squared deviations with 0.03125 for 1/32", "C = X - sum(X, dim=1) * 0.03125\nO = sum(sqr(C), dim=1) * 0.03125")
pair("float_safe_mul", "mulxy", 0, K, "Y * X for X * Y", "O = Y * X")
pair("float_safe_mm", "mm", 0, K, "matmul(X * 2, W) / 2: exact in binary floating point", "O = matmul(X * 2, W) / 2")

# ---- layout mistakes in kernels (3) and correct kernels of the same programs (0) ----
K = "layout"
MM1 = """O = kernel(X, W, grid=[2], forloop=4) {
    x = iter(X, fmap=1)
    w = iter(W, imap=[1], fmap=0)
    save(accum(matmul(x, w)), omap=[1])
}"""
MM2 = """O = kernel(X, W, grid=[2, 2], forloop=2) {
    x = iter(X, imap=[-1, 0], fmap=1)
    w = iter(W, imap=[1], fmap=0)
    save(accum(matmul(x, w)), omap=[1, 0])
}"""
SPLITK = """P = kernel(X, W, grid=[2, 2]) {
    x = iter(X, imap=[-1, 1])
    w = iter(W, imap=[1, 0])
    save(accum(matmul(x, w)), omap=[1, 0])
}
O = reshape(sum(reshape(P, shape=[2, 16, 16]), dim=0), shape=[16, 16])"""
pair("layout_mm_1d", "mm", 0, K, "matmul: grid of 2 over columns, K in 4 iterations", MM1)
pair("layout_mm_2d", "mm", 0, K, "matmul: 2x2 grid (columns by x, rows by y), K in 2 iterations", MM2)
pair("layout_mm_splitk", "mm", 0, K, "split-K: blocks along y own a K half, partial tiles stacked, then summed", SPLITK)
pair("layout_mm_splitk_combine", "mm", 3, K, "split-K combine reshapes the stacked partials wrongly: adds row pairs of one half",
     SPLITK.replace("shape=[2, 16, 16]), dim=0)", "shape=[16, 2, 16]), dim=1)"))
pair("layout_mm_splitk_wgrid", "mm", 3, K, "split-K with W's grid dims swapped: block (x, y) pairs X's K half y with W's K half x",
     SPLITK.replace("iter(W, imap=[1, 0])", "iter(W, imap=[0, 1])"))
pair("layout_mm_omap_swapped", "mm", 3, K, "2x2 grid with omap swapped: tiles written to transposed block positions", MM2.replace("omap=[1, 0]", "omap=[0, 1]"))
pair("layout_mm_replicated", "mm", 3, K, "2x2 grid: W's columns split by y, not x, so blocks along x all read the same columns",
     MM2.replace("iter(W, imap=[1], fmap=0)", "iter(W, imap=[-1, 1], fmap=0)"))
pair("layout_mm_wrong_grid_dim", "mm", 3, K, "2x2 grid: X's rows split by x instead of y (block reads another block's rows)",
     MM2.replace("imap=[-1, 0], fmap=1", "imap=[0, -1], fmap=1"))
RMSQ = """O = kernel(X, grid=[2]) {
    x = iter(X, imap=[0])
    save(accum(x / sqrt(sum(sqr(x), dim=1) / 16)), omap=[0])
}"""
pair("layout_rms_rows", "rmsq", 0, K, "RMSNorm with rows split over 2 blocks", RMSQ)
pair("layout_rms_loop", "rmsq", 0, K, "RMSNorm with the row in 2 iterations: X concatenated back by accum(fmap), squares summed", """
O = kernel(X, grid=[2], forloop=2) {
    x = iter(X, imap=[0], fmap=1)
    xa = accum(x, fmap=1)
    s = accum(sum(sqr(x), dim=1))
    save(xa / sqrt(s / 16), omap=[0])
}""")
pair("layout_rms_wrong_dim", "rmsq", 3, K, "RMSNorm reducing over the block's rows (dim 0) instead of the columns", RMSQ.replace("dim=1", "dim=0"))
pair("layout_rms_broadcast", "rmsq", 3, K, "RMSNorm whose per-row norm is reshaped to a row vector: broadcast along the wrong axis", """
O = kernel(X, grid=[1]) {
    x = iter(X)
    r = sqrt(sum(sqr(x), dim=1) / 16)
    save(accum(x / reshape(r, shape=[1, 16])), omap=[-1])
}""")
pair("layout_rms_loop_concat_dim", "rmsq", 3, K, "RMSNorm: the 2 iterations' tiles concatenated along rows, then reshaped back (permuted)", """
T = kernel(X, grid=[2], forloop=2) {
    x = iter(X, imap=[0], fmap=1)
    xa = accum(x, fmap=0)
    save(xa, omap=[0])
}
O = reshape(T, shape=[16, 16]) / sqrt(sum(sqr(X), dim=1) / 16)""")
BC = """O = kernel(X, B, grid=[2, 2]) {
    x = iter(X, imap=[0, 1])
    b = iter(B, imap=[-1, 1])
    save(accum(x + b), omap=[0, 1])
}"""
pair("layout_bcast_2d", "bcast", 0, K, "X + B (B a row) on a 2x2 grid: B's columns split by y", BC)
pair("layout_bcast_swapped", "bcast", 3, K, "X + B on a 2x2 grid: B's columns split by x: blocks (0,1) and (1,0) swap B's halves",
     BC.replace("imap=[-1, 1])", "imap=[1, -1])"))
pair("layout_bcast_axis", "bcast", 3, K, "X + B with B reshaped to a column: broadcast along the wrong axis", """
O = kernel(X, B, grid=[1]) {
    x = iter(X)
    b = iter(B)
    save(accum(x + reshape(b, shape=[8, 1])), omap=[-1])
}""")
pair("layout_rowsum_loop", "rowsum", 0, K, "row sums over 4 iterations, rows split over 2 blocks", """
O = kernel(X, grid=[2], forloop=4) {
    x = iter(X, imap=[0], fmap=1)
    save(accum(sum(x, dim=1)), omap=[0])
}""")
ONE = """O = kernel(X, Y, grid=[1]) {
    x = iter(X)
    y = iter(Y)
    save(accum(reshape(concat(x * 2, y * 2, dim=0), shape=[8, 16])), omap=[-1])
}"""
pair("layout_one_good", "onecat", 0, K, "127 + 1 elements concatenated and reshaped in a kernel", ONE)
pair("layout_one_wrong", "onecat", 3, K, "one wrong element: the last one is Y*3, not Y*2", ONE.replace("y * 2", "y * 3"))
pair("layout_one_offset", "onecat", 3, K, "off by one: Y placed first, every element shifted by one position",
     ONE.replace("concat(x * 2, y * 2, dim=0)", "concat(y * 2, x * 2, dim=0)"))
GATED = """O = kernel(X, W1, W2, grid=[2], forloop=2) {
    x = iter(X, fmap=1)
    a = iter(W1, imap=[1], fmap=0)
    b = iter(W2, imap=[1], fmap=0)
    p = accum(matmul(x, a))
    q = accum(matmul(x, b))
    save(silu(p) * q, omap=[1])
}"""
pair("layout_gated", "gated", 0, K, "gated MLP fused in one kernel", GATED)
pair("layout_gated_accum", "gated", 3, K, "gated MLP with silu inside the loop: silu of each partial product summed",
     GATED.replace("p = accum(matmul(x, a))", "p = accum(silu(matmul(x, a)))").replace("save(silu(p) * q", "save(p * q"))

# ---- attention: FlashDecoding-style splits and QKNorm ----
K = "attention"
FLASH = """P, D = kernel(Q, K, V, grid=[2, 4], forloop=2) {
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
}"""
pair("attn_flash", "attn", 0, K, "FlashDecoding: 4 splits of the keys, partial numerators and exp-sums, then combined", FLASH)
pair("attn_flash_wrong_sum_dim", "attn", 3, K, "FlashDecoding: the combine adds the exp-sums over the rows (dim 1), not the splits",
     FLASH.replace("num / sum(d, dim=2)", "num / sum(d, dim=1)"))
NORM = """P, D = kernel(Q, K, V, grid=[2, 4], forloop=2) {
    q = iter(Q, imap=[0])
    k = iter(K, imap=[0, 2], fmap=2)
    v = iter(V, imap=[0, 1], fmap=1)
    e = exp(matmul(q, k))
    p = accum(matmul(e, v))
    s = accum(sum(e, dim=2))
    save(reshape(p / s, shape=[1, 8, 1, 4]), omap=[0, 2])
    save(s, omap=[0, 2])
}
O = kernel(P, D, grid=[2], forloop=1) {
    p = iter(P, imap=[0])
    d = iter(D, imap=[0])
    w = p * reshape(d, shape=[1, 8, 4, 1])
    save(accum(reshape(sum(w, dim=2), shape=[1, 8, 4]) / sum(d, dim=2)), omap=[0])
}"""
pair("attn_split_reweighted", "attn", 0, K, "split softmax: each split normalised by its own exp-sum, the combine re-weights by the exp-sums", NORM)
pair("attn_split_no_reweight", "attn", 3, K, "split softmax combined without re-weighting: the mean of the per-split results",
     NORM.replace("w = p * reshape(d, shape=[1, 8, 4, 1])\n    save(accum(reshape(sum(w, dim=2), shape=[1, 8, 4]) / sum(d, dim=2)), omap=[0])",
                  "save(accum(reshape(sum(p, dim=2), shape=[1, 8, 4]) / 4), omap=[0])"))
pair("attn_split_sum_no_reweight", "attn", 3, K, "split softmax combined by adding the per-split results (no re-weighting, no division)",
     NORM.replace("w = p * reshape(d, shape=[1, 8, 4, 1])\n    save(accum(reshape(sum(w, dim=2), shape=[1, 8, 4]) / sum(d, dim=2)), omap=[0])",
                  "save(accum(reshape(sum(p, dim=2), shape=[1, 8, 4])), omap=[0])"))
pair("attn_qkn100_mixed", "qkn100", 0, K, "QKNorm over 100: Q as 10*Q/sqrt(sum Q^2), K as K/sqrt(sum K^2/100) (old fields: sqrt(100) = -10)",
     "Qn = Q * 10 / sqrt(sum(sqr(Q), dim=2))\nKn = K / sqrt(sum(sqr(K), dim=1) / 100)\n"
     "S = exp(matmul(Qn, Kn) / 10)\nO = matmul(S / sum(S, dim=2), V)")
pair("attn_qkn100_both_neg", "qkn100", 0, K, "QKNorm over 100 with both norms negated (-10*Q, -10*K): the signs cancel in the scores",
     "Qn = Q * -10 / sqrt(sum(sqr(Q), dim=2))\nKn = K * -10 / sqrt(sum(sqr(K), dim=1))\n"
     "S = exp(matmul(Qn, Kn) / 10)\nO = matmul(S / sum(S, dim=2), V)")
pair("attn_qkn100_one_neg", "qkn100", 3, K, "QKNorm over 100 with only Q's norm negated: the scores change sign",
     "Qn = Q * -10 / sqrt(sum(sqr(Q), dim=2))\nKn = K / sqrt(sum(sqr(K), dim=1) / 100)\n"
     "S = exp(matmul(Qn, Kn) / 10)\nO = matmul(S / sum(S, dim=2), V)")
pair("attn_qkn100_k_dim", "qkn100", 3, K, "QKNorm over 100 with K normalised over the keys (dim 2) instead of the head dim",
     "Qn = Q / sqrt(sum(sqr(Q), dim=2) / 100)\nKn = K / sqrt(sum(sqr(K), dim=2) / 8)\n"
     "S = exp(matmul(Qn, Kn) / 10)\nO = matmul(S / sum(S, dim=2), V)")
QKN = """A = kernel(Q, K, grid=[2, 2]) {
    q = iter(Q, imap=[0])
    k = iter(K, imap=[0, 2])
    kn = k / sqrt(sum(sqr(k), dim=1) / 16)
    s = matmul(q, kn) / sqrt(sum(sqr(q), dim=2) / 16)
    save(accum(s / 4), omap=[0, 2])
}
O = kernel(A, V, grid=[2], forloop=2) {
    a = iter(A, imap=[0], fmap=2)
    v = iter(V, imap=[0], fmap=1)
    e = exp(a)
    n = accum(matmul(e, v))
    d = accum(sum(e, dim=2))
    save(n / d, omap=[0])
}"""
pair("attn_qkn16_kernels", "qkn16", 0, K, "QKNorm: normalised scores in 2x2 blocks, then exp, numerator and denominator over 2 iterations", QKN)
pair("attn_qkn16_norm_dim", "qkn16", 3, K, "QKNorm kernels with K's norm over the block's keys (dim 2) instead of the head dim",
     QKN.replace("sum(sqr(k), dim=1) / 16", "sum(sqr(k), dim=2) / 16"))
pair("attn_qkn16_kblock", "qkn16", 3, K, "QKNorm kernels: K's key blocks taken from grid x (the batch) instead of y",
     QKN.replace("k = iter(K, imap=[0, 2])", "k = iter(K, imap=[2, 0])"))




def main():
    os.makedirs(os.path.join(ROOT, "programs"), exist_ok=True)
    os.makedirs(os.path.join(ROOT, "cases"), exist_ok=True)
    for d in ("programs", "cases"):
        for f in os.listdir(os.path.join(ROOT, d)):
            if f.endswith(".mu"):
                os.remove(os.path.join(ROOT, d, f))
    for name, text in PROGRAMS.items():
        with open(os.path.join(ROOT, "programs", name + ".mu"), "w") as f:
            f.write(text)
    seen = set()
    for name, program, expect, klass, why, body in CASES:
        assert name not in seen, name
        seen.add(name)
        assert expect in (0, 3, 5) and "\n" not in why
        with open(os.path.join(ROOT, "cases", name + ".mu"), "w") as f:
            f.write("# program: tests/verify/programs/%s.mu\n# expect: %d\n# class: %s\n# why: %s\n"
                    % (program, expect, klass, why))
            f.write(body)
    print("%d programs, %d cases" % (len(PROGRAMS), len(CASES)))


if __name__ == "__main__":
    main()
