#!/usr/bin/env python3
"""Writes CORA's transformer encoder layer (cora.txt §7: post-LayerNorm, biases, ReLU) as a
ragged mugen program (docs/ragged.md): a batch of --batch sequences of lengths given at run
time (at most --max), hidden --hidden, --heads heads, FFN --ffn.

usage: tools/make_encoder.py [--batch 32] [--max 512] [--hidden 512] [--heads 8] [--ffn 2048]
                             [--dtype f16] > examples/ragged/encoder_b32.mu
"""
import argparse

ap = argparse.ArgumentParser()
ap.add_argument("--batch", type=int, default=32)
ap.add_argument("--max", type=int, default=512)
ap.add_argument("--hidden", type=int, default=512)
ap.add_argument("--heads", type=int, default=8)
ap.add_argument("--ffn", type=int, default=2048)
ap.add_argument("--dtype", default="f16")
ap.add_argument("--eps", default="1e-5")
ap.add_argument("--part", choices=("layer", "ffn"), default="layer",
                help="ffn: only the token-wise half (FFN, residual, LayerNorm), which runs today")
a = ap.parse_args()
B, H, NH, F, t = a.batch, a.hidden, a.heads, a.ffn, a.dtype
HD = H // NH
assert HD * NH == H, "hidden must be a multiple of heads"
r_h, r_f = (3.0 / H) ** 0.5, (3.0 / F) ** 0.5  # weights uniform in +-sqrt(3 / fan-in), as a model's


def ln(x, g, b, out):
    return [f"{out}_m = {x} - mean({x}, dim=-1)",
            f"{out} = {out}_m * rsqrt(mean({out}_m * {out}_m, dim=-1) + {a.eps}) * {g} + {b}"]


lines = [
    "# CORA's transformer encoder layer (cora.txt §7), written by tools/make_encoder.py (docs/ragged.md):",
    f"#   python3 tools/make_encoder.py --batch {B} --max {a.max} --hidden {H} --heads {NH} --ffn {F} --dtype {t}"
    + (" --part ffn" if a.part == "ffn" else ""),
    f"# {B} sequences of run-time lengths (at most {a.max}), hidden {H}, {NH} heads of {HD}, FFN {F} (ReLU),",
    "# post-LayerNorm, biases. Each sequence attends to its own keys only: no mask, no padding.",
    f"lengths len[{B}] max={a.max}",
    f"input x : {t}[{B}, len, {H}]",
]
if a.part == "ffn":  # the layer's second half: token-wise, no attention
    lines[2:4] = [f"# Its token-wise half: FFN {F} (ReLU), residual, LayerNorm over {B} sequences of run-time",
                  f"# lengths (at most {a.max}), hidden {H}: no operator mixes tokens (docs/ragged.md, token form)."]
    lines += [f"input {b} : {t}[{H}]" for b in ("b2", "g2", "be2")]
    lines += [f"input w1 : {t}[1, {H}, {F}] range={r_h:.5f}", f"input b1 : {t}[{F}]",
              f"input w2 : {t}[1, {F}, {H}] range={r_f:.5f}",
              "f = relu(matmul(x, w1) + b1)", "h2 = x + matmul(f, w2) + b2"]
    lines += ln("h2", "g2", "be2", "y")
    lines.append("output y")
    print("\n".join(lines))
    raise SystemExit(0)
for w in ("wq", "wk", "wv", "wo"):
    lines.append(f"input {w} : {t}[1, {H}, {H}] range={r_h:.5f}")
for b in ("bq", "bk", "bv", "bo", "b2", "g1", "be1", "g2", "be2"):
    lines.append(f"input {b} : {t}[{H}]")
lines += [f"input w1 : {t}[1, {H}, {F}] range={r_h:.5f}", f"input b1 : {t}[{F}]",
          f"input w2 : {t}[1, {F}, {H}] range={r_f:.5f}"]
for n in ("q", "k", "v"):
    lines.append(f"{n} = transpose(reshape(matmul(x, w{n}) + b{n}, shape=[{B}, len, {NH}, {HD}]), perm=[0, 2, 1, 3])")
lines += [
    f"# scores [{B}, {NH}, len, len]: each sequence's queries against its own keys",
    f"s = matmul(q, transpose(k, perm=[0, 1, 3, 2])) * {1 / HD ** 0.5:g}",
    "e = exp(s - max(s, dim=-1))",
    f"a = reshape(transpose(matmul(e / sum(e, dim=-1), v), perm=[0, 2, 1, 3]), shape=[{B}, len, {H}])",
    "h1 = x + matmul(a, wo) + bo",
]
lines += ln("h1", "g1", "be1", "y1")
lines += ["f = relu(matmul(y1, w1) + b1)", "h2 = y1 + matmul(f, w2) + b2"]
lines += ln("h2", "g2", "be2", "y")
lines.append("output y")
print("\n".join(lines))
