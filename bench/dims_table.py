"""Joins bench/dims.sh's variant timings into the per-shape comparison (docs/tuning.md).

variants.tsv: program, capacity, time (us), ok. A variant computes all its capacity's rows, so
its time at any B it holds is its time at its capacity. For each B in [1, max]: the variant a
call runs (the smallest capacity >= B), the single variant of the largest capacity (static
shapes padded to the maximum), and the oracle (the fastest variant holding B)."""
import math
import sys
from collections import defaultdict


def main(path):
    var = defaultdict(dict)
    for line in open(path):
        w, c, t, ok = line.rstrip("\n").split("\t")
        if ok == "ok" and t != "-":
            var[w][int(c)] = float(t)
    print("| program | shapes | variants | portfolio vs single (geomean) | worst shape | "
          "portfolio vs oracle: within 5% | within 2% (geomean) |")
    print("|---|---|---|---|---|---|---|")
    for w, v in sorted(var.items()):
        caps = sorted(v)
        hi = caps[-1]
        lr, near, lo_ = [], 0, []
        for b in range(1, hi + 1):
            pick = min(c for c in caps if c >= b)
            oracle = min(v[c] for c in caps if c >= b)
            r = v[hi] / v[pick]
            lr.append(math.log(r))
            near += v[pick] <= 1.05 * oracle
            lo_.append(math.log(v[pick] / oracle))
        worst = min((v[hi] / v[min(c for c in caps if c >= b)], b) for b in range(1, hi + 1))
        print(f"| {w} | 1..{hi} | {len(caps)} | {math.exp(sum(lr) / len(lr)):.2f}x | {worst[0]:.2f}x at B = {worst[1]} | "
              f"{100 * near / hi:.0f}% | {100 * (math.exp(sum(lo_) / len(lo_)) - 1):.1f}% |")
    print()
    for w, v in sorted(var.items()):
        print(f"{w}, each variant's time (us): " + ", ".join(f"{c} rows {v[c]:.1f}" for c in sorted(v)))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "variants.tsv")
