#!/usr/bin/env python3
"""The ragged encoder layer's floors (issue #28): for each length file and batch, the tokens
of the first batch (lines 1..B, as `mugen eval --lengths len=FILE --batch B` reads them), the
useful FLOPs (no padding: projections and FFN over the tokens, attention over each sequence's
own L x L), the tensor-core floor at 660 TFLOP/s, the byte floor at 3.0 TB/s (weights once,
the layer's input and output), and the issue's PyTorch figures with the 1.5x target.

usage: bench/ragged/floors.py [LENGTHS_DIR]   (default ../shared/data/lengths)
"""
import os
import sys

H, F = 512, 2048
TFLOPS, TBS = 660e12, 3.0e12
# the PyTorch figures (µs; padded / torch.compile / packed + varlen attention)
TORCH = {("cola", 32): (66.8, 58.6, 53.5), ("cola", 128): (175.8, 102.5, 114.7),
         ("mnli", 32): (141.5, 88.7, 80.6), ("mnli", 128): (536.3, 325.8, 209.6),
         ("race", 32): (580.4, 369.1, 433.7), ("race", 128): (2227, 1395, 1633),
         ("squad", 32): (427.6, 260.3, 223.1), ("squad", 128): (1646, 1023, 846.5)}

d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../../../shared/data/lengths")
print("| file | batch | tokens | max len | useful GFLOP | FLOP floor (µs) | byte floor (µs) | padded/actual work | best PyTorch (µs) | 1.5x target (µs) |")
print("|---|---|---|---|---|---|---|---|---|---|")
for name in ("cola", "mnli", "race", "squad"):
    lens = [int(x) for x in open(os.path.join(d, name + ".txt")) if x.strip()]
    for b in (32, 128):
        L = lens[:b]
        t = sum(L)
        flops = 4 * 2 * t * H * H + 2 * 2 * t * H * F + 4 * H * sum(x * x for x in L)
        padded = 4 * 2 * b * max(L) * H * H + 2 * 2 * b * max(L) * H * F + 4 * H * b * max(L) ** 2
        nbytes = 2 * (4 * H * H + 2 * H * F) + 2 * 2 * t * H
        best = min(TORCH[(name, b)])
        print("| %s | %d | %d | %d | %.2f | %.2f | %.2f | %.2fx | %.1f | %.1f |" % (
            name, b, t, max(L), flops / 1e9, flops / TFLOPS * 1e6, nbytes / TBS * 1e6, padded / flops, best, best / 1.5))
