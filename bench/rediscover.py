#!/usr/bin/env python3
"""bench/rediscover.py: which μGraph of a `mugen search` output folder is the known design
for its benchmark, and at what rank (issue 5, "rediscovers from the example programs").

    python3 bench/rediscover.py BENCH DIR

BENCH is rmsnorm (Figure 3b: one kernel accumulating both the matmul and the sum of squares
in one for-loop, the division after it), gated_mlp (one kernel, both matmuls accumulated, silu
after), lora (one kernel with a concat), ntrans (one kernel) or gqa (FlashDecoding: a kernel
whose blocks save partial sums over a split of the KV sequence side by side, then a kernel that
sums them). Prints the best-ranked match and its text, or "not found"; exit 0 either way,
1 on a bad folder."""
import os
import re
import sys

LINE = re.compile(r"^\s*(?:(\w+) = )?(\w+)\((.*)\)\s*$")


def kernels(text):
    """[(header, [(name, op, args)])] for each graph-defined kernel of a μGraph text; and the
    number of kernel-level operators."""
    out, body, kops = [], None, 0
    for line in text.splitlines():
        if line.startswith("#") or line.startswith("input ") or line.startswith("output "):
            continue
        if body is None:
            if "kernel(" in line:
                body = []
                out.append((line, body))
                kops += 1
            elif "=" in line:
                kops += 1
            continue
        if line.strip() == "}":
            body = None
            continue
        m = LINE.match(line)
        if m:
            body.append((m.group(1), m.group(2), [a.strip() for a in m.group(3).split(",")]))
    return out, kops


def ops_of(body):
    return {name: (op, args) for name, op, args in body if name}


def accumulates(body, op):
    """Does the block graph accumulate (sum over the for-loop) a value computed by op?"""
    defs = ops_of(body)
    return any(o == "accum" and defs.get(a[0], ("",))[0] == op and not any(x.startswith("fmap") for x in a[1:])
               for _, o, a in body)


def is_fig3b(ks, kops):
    if kops != 1 or len(ks) != 1:
        return False
    body = ks[0][1]
    header = ks[0][0]
    loop = re.search(r"forloop=(\d+)", header)
    return loop and int(loop.group(1)) > 1 and accumulates(body, "matmul") and accumulates(body, "sum")


def is_gated(ks, kops):
    if kops != 1 or len(ks) != 1:
        return False
    body = ks[0][1]
    defs = ops_of(body)
    accum_mm = sum(1 for _, o, a in body if o == "accum" and defs.get(a[0], ("",))[0] == "matmul")
    return accum_mm == 2 and any(o == "silu" for _, o, _a in body)


def is_lora(ks, kops):
    return kops == 1 and len(ks) == 1 and any(o == "concat" for _, o, _a in ks[0][1])


def is_one_kernel(ks, kops):
    return kops == 1 and len(ks) == 1


def is_flashdecoding(ks, kops):
    if len(ks) < 2:
        return False
    first, second = ks[0][1], ks[1][1]
    split = any(o == "reshape" for _, o, _a in first) and any(o == "exp" for _, o, _a in first)
    return split and any(o == "sum" for _, o, _a in second)


CHECKS = {"rmsnorm": is_fig3b, "gated_mlp": is_gated, "lora": is_lora, "ntrans": is_one_kernel,
          "gqa": is_flashdecoding}


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in CHECKS:
        print(__doc__)
        return 1
    bench, folder = sys.argv[1], sys.argv[2]
    summary = os.path.join(folder, "summary.txt")
    if not os.path.exists(summary):
        print(f"{summary}: no such file (run mugen search --out {folder} first)")
        return 1
    rows = []
    for line in open(summary):
        m = re.match(r"\s*(\d+)\s+[\d.]+\s+\d+\s+\d+\s+\d+\s+(\S+\.mu)", line)
        if m:
            rows.append((int(m.group(1)), m.group(2)))
    for rank, name in rows:
        text = open(os.path.join(folder, name)).read()
        ks, kops = kernels(text)
        if CHECKS[bench](ks, kops):
            print(f"{bench}: found at rank {rank} of {len(rows)} ({name})")
            print(text)
            return 0
    print(f"{bench}: not found among {len(rows)} verified μGraphs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
