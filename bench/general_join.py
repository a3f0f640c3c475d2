#!/usr/bin/env python3
"""Joins the tables of bench/suite.py --searched runs (one per GPU, bench/general.sh with
GPUS=N) into one: per program mugen's time and where it came from (the lowering or a searched
μGraph), PyTorch eager and torch.compile, and the best of the two over mugen; then the
geometric mean, the lowest ratio and the programs below 0.9x.
    python3 bench/general_join.py TABLE.md ...
"""
import math, re, sys

rows = {}
for path in sys.argv[1:]:
    for line in open(path):
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        if len(c) == 12 and c[0] not in ("program",) and not c[0].startswith("-"):
            r = rows.setdefault(c[0], {})
            r.update(mugen=c[1], kernels=c[2], eager=c[4], compile=c[5], floor=c[6])
        elif len(c) == 5 and c[0] != "program" and not c[0].startswith("-"):
            rows.setdefault(c[0], {}).update(src=c[1], lowered=c[2], searched=c[3])


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


print("| program | mugen µs | from | kernels | lowered µs | best searched µs | eager µs | compile µs | floor µs | best torch / mugen |")
print("|---|---|---|---|---|---|---|---|---|---|")
ratios = []
for name in sorted(rows):
    r = rows[name]
    m, e, c = num(r.get("mugen")), num(r.get("eager")), num(r.get("compile"))
    best = min(x for x in (e, c) if x) if (e or c) else None
    q = best / m if best and m else None
    if q:
        ratios.append((q, name))
    print(f"| {name} | {r.get('mugen')} | {r.get('src')} | {r.get('kernels')} | {r.get('lowered')} | "
          f"{r.get('searched')} | {r.get('eager')} | {r.get('compile')} | {r.get('floor')} | "
          f"{q:.2f}x |" if q else f"| {name} | - | | | | | | | | - |")
g = math.exp(sum(math.log(q) for q, _ in ratios) / len(ratios))
low = sorted(ratios)[:1]
print(f"\n{len(ratios)} programs: best of eager and torch.compile over mugen, geometric mean {g:.3f}x; "
      f"lowest {low[0][0]:.2f}x ({low[0][1]}); below 0.9x: "
      f"{', '.join(f'{n} {q:.2f}x' for q, n in sorted(ratios) if q < 0.9) or 'none'}; "
      f"from a searched μGraph: {sum(1 for r in rows.values() if r.get('src') not in ('lowered', None))} of {len(rows)}")
