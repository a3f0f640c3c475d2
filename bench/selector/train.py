#!/usr/bin/env python3
"""The learned selector's training (issue #29 item 4, docs/tuning.md "The selector").

A Reformer (../shared/papers/reformer.txt §3-4) over features of B for the variants of one
program of a symbolic dim: z-score (Υ), Γ-blocks x' = ReLU(A1 x + b1 + A3 T(x) + b3) with
T(x) = dropout(LayerNorm(ReLU(A2 x + b2))) (three matmuls a block), then a linear layer and a
softmax over the variants (Ξ). Labels are the paper's optimality probabilities: for the
variants that hold B, p_i = (1 / t_i) / sum_k (1 / t_k) (p_j / p_i = t_i / t_j; a variant
that does not hold B has t = inf, p = 0); the loss is the cross-entropy H(p, y). The model's
scores of variants that do not hold B are masked before the softmax, as inference takes the
best that holds B (src/tune/selector.c).

Held out: a random third of the B values (seeded). On them it reports, against the oracle (the
fastest measured variant at each B): the share of B whose choice is within 5% of it and the
geometric mean of chosen / oracle time, for the selector and three baselines:
  (a) rule:  the smallest capacity that holds B (what a call runs without a selector);
  (b) model: the cost model alone, time proportional to the waves of blocks the variant
      launches at B with run-time grids (the compiler's count: the CSV's waves column), ties to
      the smaller capacity;
  (c) nn:    the nearest training B (in log B): the variant fastest there that holds B.
Writes the weights (format: docs/tuning.md; read by src/tune/selector.c) to --out.

usage: train.py DATA.csv PROGRAM [--out data/selector/PROGRAM.txt] [--seed 29] [--epochs 600]
                [--decisions FILE]
"""
import argparse
import csv
import math
import random
import sys

import torch


def load(path, program):
    t = {}  # (B, capacity) -> time_us (the median where a pair was run more than once)
    dev = set()
    wv = {}  # (B, capacity) -> waves launched
    with open(path) as f:
        for r in csv.DictReader(f):
            if r["program"] != program or r["time_us"] in ("", "-"):
                continue
            t.setdefault((int(r["B"]), int(r["capacity"])), []).append(float(r["time_us"]))
            if r.get("waves"):
                wv[(int(r["B"]), int(r["capacity"]))] = int(r["waves"])
            dev.add(r["device"])
    t = {k: sorted(v)[len(v) // 2] for k, v in t.items()}
    bs = sorted({b for b, _ in t})
    caps = sorted({c for _, c in t})
    return t, bs, caps, dev, wv


def features(b, caps, hi):
    """As sl_features in src/tune/selector.c: log2 b, b / hi, b / c for each capacity c >= b."""
    return [math.log2(b), b / hi] + [b / c if c >= b else 0.0 for c in caps]


def probs(b, caps, t):
    inv = [1.0 / t[(b, c)] if (b, c) in t else 0.0 for c in caps]
    s = sum(inv)
    return [x / s for x in inv]


class Gamma(torch.nn.Module):
    """One Γ-block (Reformer eq. 1): three matmuls (A1, A2, A3)."""

    def __init__(self, d_in, d_mid, d_out, drop):
        super().__init__()
        self.a1 = torch.nn.Linear(d_in, d_out)
        self.a2 = torch.nn.Linear(d_in, d_mid)
        self.ln = torch.nn.LayerNorm(d_mid, eps=1e-5)
        self.drop = torch.nn.Dropout(drop)
        self.a3 = torch.nn.Linear(d_mid, d_out)

    def forward(self, x):
        h = self.drop(self.ln(torch.relu(self.a2(x))))
        return torch.relu(self.a1(x) + self.a3(h))


class Reformer(torch.nn.Module):
    def __init__(self, d, widths, n_classes, drop):
        super().__init__()
        self.blocks = torch.nn.ModuleList()
        for mid, out in widths:
            self.blocks.append(Gamma(d, mid, out, drop))
            d = out
        self.out = torch.nn.Linear(d, n_classes)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.out(x)  # scores; the softmax is in the loss


def fmt(v):
    return " ".join("%.9g" % float(x) for x in v)


def write(path, model, caps, lo, hi, mean, std, widths):
    with open(path, "w") as f:
        f.write("mugen-selector 1\nclasses %d\ncaps %s\nrange %d %d\nfeatures %d\nblocks %d\n"
                % (len(caps), " ".join(map(str, caps)), lo, hi, len(mean), len(widths)))
        for mid, out in widths:
            f.write("width %d %d\n" % (mid, out))
        f.write("mean %s\nstd %s\n" % (fmt(mean), fmt(std)))
        for b in model.blocks:
            for name, p in (("A1", b.a1.weight), ("b1", b.a1.bias), ("A2", b.a2.weight), ("b2", b.a2.bias),
                            ("ln_g", b.ln.weight), ("ln_b", b.ln.bias), ("A3", b.a3.weight), ("b3", b.a3.bias)):
                f.write("%s %s\n" % (name, fmt(p.detach().flatten().tolist())))
        f.write("Af %s\nbf %s\n" % (fmt(model.out.weight.detach().flatten().tolist()), fmt(model.out.bias.detach().tolist())))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data")
    ap.add_argument("program")
    ap.add_argument("--out")
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument("--epochs", type=int, default=600)
    ap.add_argument("--decisions", help="writes 'B capacity' for every B of the range")
    ap.add_argument("--nsm", type=int, default=132, help="SMs for the wave model (H200: 132)")
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    t, bs, caps, dev, wv = load(a.data, a.program)
    if len(bs) < 6 or not caps:
        sys.exit("train.py: %s: %d values of B for %s; too few to train on" % (a.data, len(bs), a.program))
    lo, hi = min(bs), max(caps)
    # only B values where every variant that holds B was measured (a cut-short run leaves some)
    bs = [b for b in bs if all((b, c) in t for c in caps if c >= b)]
    rnd = random.Random(a.seed)
    held = set(rnd.sample(bs, len(bs) // 3))
    train = [b for b in bs if b not in held]
    test = sorted(held)
    x = torch.tensor([features(b, caps, hi) for b in train])
    mean, std = x.mean(0), x.std(0)
    std = torch.where(std > 0, std, torch.ones_like(std))
    xn = (x - mean) / std
    p = torch.tensor([probs(b, caps, t) for b in train])
    mask = torch.tensor([[c < b for c in caps] for b in train])
    widths = [(32, 32), (32, 32), (16, 16)]  # three Γ-blocks, as the paper's kernel selector
    model = Reformer(len(caps) + 2, widths, len(caps), 0.1)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3, weight_decay=1e-4)
    for _ in range(a.epochs):
        opt.zero_grad()
        s = model(xn).masked_fill(mask, -1e9)
        loss = -(p * torch.log_softmax(s, 1)).sum(1).mean()  # H(p, y), Reformer §4
        loss.backward()
        opt.step()
    model.eval()

    def choose_reformer(b):
        with torch.no_grad():
            s = model((torch.tensor([features(b, caps, hi)]) - mean) / std)[0]
        return max((c for c in caps if c >= b), key=lambda c: s[caps.index(c)].item())

    def choose_rule(b):
        return min(c for c in caps if c >= b)

    # (b): the cost model alone: time proportional to the waves of blocks the variant launches
    # at B (with run-time grids; the compiler's count, the CSV's waves column), ties to the
    # smaller capacity; without waves in the data, ceil(B / 64) blocks of 64 rows
    def choose_model(b):
        def cost(c):
            w = wv.get((b, c))
            return (w if w is not None else math.ceil(math.ceil(min(b, c) / 64) / a.nsm), c)
        return min((c for c in caps if c >= b), key=cost)

    def choose_nn(b):
        n = min(train, key=lambda q: abs(math.log(q) - math.log(b)))
        order = sorted(caps, key=lambda c: t.get((n, c), float("inf")))
        return next((c for c in order if c >= b), choose_rule(b))

    print("%s: %d values of B (%d held out), %d variants, device %s" % (a.program, len(bs), len(test), len(caps),
                                                                        ", ".join(sorted(dev))))
    print("| chooser | within 5% of the oracle | geomean time / oracle | agrees with the selector |")
    print("|---|---|---|---|")
    rows = (("selector (Reformer)", choose_reformer), ("(a) smallest capacity", choose_rule),
            ("(b) wave cost model", choose_model), ("(c) nearest neighbour", choose_nn))
    pick = {b: choose_reformer(b) for b in test}
    for name, f in rows:
        r = []
        agree = 0
        for b in test:
            c = f(b)
            best = min(t[(b, q)] for q in caps if q >= b)
            r.append(t[(b, c)] / best)
            agree += c == pick[b]
        within = 100.0 * sum(q <= 1.05 for q in r) / len(r)
        geo = math.exp(sum(math.log(q) for q in r) / len(r))
        print("| %s | %.1f%% | %.4fx | %d of %d |" % (name, within, geo, agree, len(test)))
    # against the single variant of the range's maximum (issue #29's "single variant mugen would
    # use today"): (i) padded, a static program of HI rows run whole (its time at B = HI), (ii)
    # the same variant with run-time grids (its time at B)
    top = max(caps)
    full = max((b for (b, c) in t if c == top), default=None)  # HI, or the largest B measured
    if full is not None:
        print("(the padded variant's time: its time at B = %d, %.2f us)" % (full, t[(full, top)]))
        for name, base in (("the %d-row variant padded (whole grid)" % top, lambda b: t[(full, top)]),
                           ("the %d-row variant with run-time grids" % top, lambda b: t[(b, top)])):
            r = [base(b) / t[(b, pick[b])] for b in test]
            geo = math.exp(sum(math.log(q) for q in r) / len(r))
            print("held out, selector against %s: %.3fx geomean, worst %.3fx (B = %d)" %
                  (name, geo, min(r), test[r.index(min(r))]))
    at = [b for b in (1, 7, 37, 100, 129, 200, 300, 511, 512) if lo <= b <= hi]
    print("decisions (as build/bench-select prints them from the weights): " +
          ", ".join("B = %d: %d" % (b, choose_reformer(b)) for b in at))
    if a.decisions:  # every B of the range, to compare with `build/bench-select WEIGHTS all`
        with open(a.decisions, "w") as f:
            for b in range(lo, hi + 1):
                f.write("%d %d\n" % (b, choose_reformer(b)))
    if a.out:
        write(a.out, model, caps, lo, hi, mean.tolist(), std.tolist(), widths)
        print("weights: %s" % a.out)


if __name__ == "__main__":
    main()
