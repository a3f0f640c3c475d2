#!/usr/bin/env python3
"""Writes a LLaMA-style decode step as a mugen program (.mu), issue #25 item 7.

One step of batch B sequences, each with its own KV cache (given as inputs), through L
decoder layers; docs/decode.md describes the program's layout. Per layer:

    h = rmsnorm(x, eps) * g1                       RMSNorm with a gain
    qkv = h Wqkv                                   one fused projection, split by slice
    K = concat(Kcache, k), V = concat(Vcache, v)   the new token's k, v appended (--no-append:
                                                   attention over the cache alone)
    S = q K^T / sqrt(head_dim)                     GQA: heads / kv_heads query heads per KV
                                                   head, by reshape; K^T by transpose
    P = exp(S - max(S)) / sum(exp(S - max(S)))     softmax over the positions
    x = x + reshape(P V) Wo                        output projection, residual
    h = rmsnorm(x, eps) * g2
    x = x + (silu(h W1) * (h W3)) W2               SwiGLU FFN, residual

No RoPE. The outputs are the last layer's x (named y) and every layer's new k and v (what a
runtime writes into the caches). Python 3, standard library only.

    python3 tools/make_decode.py --batch 8 -o examples/decode_1b_b8.mu
"""
import argparse
import math
import sys


def scale_text(head_dim):
    """1 / sqrt(head_dim): an exact decimal when there is one (64 -> 0.125), else rsqrt(d)."""
    r = math.isqrt(head_dim)
    if r * r == head_dim:
        m = r
        while m % 2 == 0:
            m //= 2
        while m % 5 == 0:
            m //= 5
        if m == 1:
            text = "%.18f" % (1 / r)
            return text.rstrip("0").rstrip(".")
    return "rsqrt(%d)" % head_dim


def weight(k):
    """A weight's test-input range for fan-in k (` range=`, docs/ir.md): uniform in [-r, r) with
    r = sqrt(3 / k) has variance 1 / k, so a projection keeps its input's scale, as a trained
    model's layers do; with [-1, 1) the 16-layer step's residual stream passes f16's largest."""
    return " range=%.4g" % math.sqrt(3.0 / k)


def layer(a, i, x, out):
    """Lines of layer i reading the residual stream x and writing out."""
    B, H, NH, NKV, D, F, L, T = (a.batch, a.hidden, a.heads, a.kv_heads, a.head_dim, a.ffn,
                                 a.cache, a.dtype)
    G = NH // NKV
    p = "l%d_" % i
    QN, KN = NH * D, NKV * D
    pos = L + 1 if a.append else L
    ln = [
        "# layer %d" % i,
        "input %sg1 : %s[%d]" % (p, T, H),
        "input %swqkv : %s[%d, %d]%s" % (p, T, H, QN + 2 * KN, weight(H)),
        "input %skc : %s[%d, %d, %d, %d]" % (p, T, B, NKV, L, D),
        "input %svc : %s[%d, %d, %d, %d]" % (p, T, B, NKV, L, D),
        "input %swo : %s[%d, %d]%s" % (p, T, QN, H, weight(QN)),
        "input %sg2 : %s[%d]" % (p, T, H),
        "input %sw1 : %s[%d, %d]%s" % (p, T, H, F, weight(H)),
        "input %sw3 : %s[%d, %d]%s" % (p, T, H, F, weight(H)),
        "input %sw2 : %s[%d, %d]%s" % (p, T, F, H, weight(F)),
        "%sh = rmsnorm(%s, dim=-1, eps=%s) * %sg1" % (p, x, a.eps, p),
        "%sqkv = matmul(%sh, %swqkv)" % (p, p, p),
        "%sq = reshape(slice(%sqkv, dim=1, start=0, len=%d), shape=[%d, %d, %d, %d])"
        % (p, p, QN, B, NKV, G, D),
        "%sk = reshape(slice(%sqkv, dim=1, start=%d, len=%d), shape=[%d, %d, 1, %d])"
        % (p, p, QN, KN, B, NKV, D),
        "%sv = reshape(slice(%sqkv, dim=1, start=%d, len=%d), shape=[%d, %d, 1, %d])"
        % (p, p, QN + KN, KN, B, NKV, D),
    ]
    if a.append:
        ln += ["%sK = concat(%skc, %sk, dim=2)" % (p, p, p),
               "%sV = concat(%svc, %sv, dim=2)" % (p, p, p)]
        k, v = p + "K", p + "V"
    else:
        k, v = p + "kc", p + "vc"
    ln += [
        "# scores [%d, %d, %d, %d]: batch, kv head, query head of the group, position"
        % (B, NKV, G, pos),
        "%ss = matmul(%sq, transpose(%s, perm=[0, 1, 3, 2])) * %s" % (p, p, k, scale_text(D)),
        "%se = exp(%ss - max(%ss, dim=3))" % (p, p, p),
        "%sa = reshape(matmul(%se / sum(%se, dim=3), %s), shape=[%d, %d])" % (p, p, p, v, B, QN),
        "%sx = %s + matmul(%sa, %swo)" % (p, x, p, p),
        "%sh2 = rmsnorm(%sx, dim=-1, eps=%s) * %sg2" % (p, p, a.eps, p),
        "%sf = silu(matmul(%sh2, %sw1)) * matmul(%sh2, %sw3)" % (p, p, p, p, p),
        "%s = %sx + matmul(%sf, %sw2)" % (out, p, p, p),
    ]
    return ln


def command_args(a):
    """The options that write this program again (the header comment records them)."""
    t = ("--layers %d --hidden %d --heads %d --kv-heads %d --head-dim %d --ffn %d --cache %d "
         "--batch %d --dtype %s --eps %s" % (a.layers, a.hidden, a.heads, a.kv_heads, a.head_dim,
                                            a.ffn, a.cache, a.batch, a.dtype, a.eps))
    return t + ("" if a.append else " --no-append")


def program(a):
    """The whole program's text."""
    if a.heads % a.kv_heads:
        sys.exit("make_decode.py: --heads must be a multiple of --kv-heads")
    for name in ("layers", "hidden", "heads", "kv_heads", "head_dim", "ffn", "cache", "batch"):
        if getattr(a, name) < 1:
            sys.exit("make_decode.py: --%s must be at least 1" % name.replace("_", "-"))
    ln = [
        "# A LLaMA-style decode step, written by tools/make_decode.py (docs/decode.md):",
        "#   python3 tools/make_decode.py %s" % command_args(a),
        "# %d layers, hidden %d, %d query heads and %d KV heads of %d, FFN %d (SwiGLU), batch %d,"
        % (a.layers, a.hidden, a.heads, a.kv_heads, a.head_dim, a.ffn, a.batch),
        "# KV caches of %d positions (inputs)%s; RMSNorm eps %s; no RoPE; %s;"
        % (a.cache, ", the new token's k and v appended" if a.append else
           ", the new token's k and v not added", a.eps, a.dtype),
        "# the weights' test inputs uniform in +-sqrt(3 / fan-in) (range=), as a model's.",
        "input x : %s[%d, %d]" % (a.dtype, a.batch, a.hidden),
    ]
    x = "x"
    for i in range(a.layers):
        out = "y" if i == a.layers - 1 else "x%d" % (i + 1)
        ln += layer(a, i, x, out)
        x = out
    news = ["l%d_%s" % (i, t) for i in range(a.layers) for t in ("k", "v")]
    ln.append("output y, " + ", ".join(news))
    return "\n".join(ln) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", type=int, default=16)
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--heads", type=int, default=32, help="query heads")
    ap.add_argument("--kv-heads", type=int, default=8)
    ap.add_argument("--head-dim", type=int, default=64)
    ap.add_argument("--ffn", type=int, default=8192)
    ap.add_argument("--cache", type=int, default=1024, help="positions in each KV cache input")
    ap.add_argument("--batch", type=int, default=1, help="sequences, each with its own cache")
    ap.add_argument("--dtype", default="f16", choices=("f16", "bf16", "f32"))
    ap.add_argument("--eps", default="1e-5", help="RMSNorm epsilon, a decimal")
    ap.add_argument("--no-append", dest="append", action="store_false",
                    help="attend over the cache alone (the new k, v are only outputs)")
    ap.add_argument("-o", "--out", help="output file (default: standard output)")
    a = ap.parse_args()
    text = program(a)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
