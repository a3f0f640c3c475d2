#!/usr/bin/env python3
"""Summarise a persistent launch's trace (MUGEN_TRACE=FILE mugen run --megakernel ...; the
format is driver.c trace_write's). Per launch of the program: its tasks, when the first could
run and the last ended (us from the first task's start), the median and the longest task, the
median wait before a task could run, and the gap from the previous launch's end to this one's
first run. Then the whole: makespan, blocks, and the blocks' time split into running, waiting
and idle (after their last task).

usage: tools/trace.py TRACE [--top N]   (N: also the N launches with the longest span)
"""
import statistics
import sys


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    top = int(sys.argv[sys.argv.index("--top") + 1]) if "--top" in sys.argv else 0
    launches, tasks = [], []
    with open(sys.argv[1]) as f:
        for line in f:
            w = line.split()
            if not w or w[0].startswith("#"):
                continue
            if w[0] == "launch":
                launches.append((int(w[2]), int(w[3]), " ".join(w[4:])))
            elif w[0] == "task":
                t, l, _, sm, blk, s0, s1, e = map(int, w[1:9])
                tasks.append((l, sm, blk, s0, s1, e))
    if not tasks:
        sys.exit("trace.py: no tasks in " + sys.argv[1])
    bad = [x for x in tasks if not 0 <= x[3] <= x[4] <= x[5]]
    if bad or len(tasks) != sum(n for _, n, _ in launches):
        sys.exit("trace.py: %d of %d tasks out of order (start <= may_run <= end), %d launches' tasks listed" % (
            len(bad), len(tasks), sum(n for _, n, _ in launches)))
    us = 1e-3
    rows, prev_end = [], None
    print("%4s %6s %9s %9s %8s %8s %8s %8s %8s  %s" % ("L", "tasks", "first", "end", "span", "run.med", "run.max",
                                                       "wait.med", "gap", "label"))
    for l, (first, n, label) in enumerate(launches):
        ts = [x for x in tasks if x[0] == l]
        if not ts:
            continue
        start = min(x[4] for x in ts)
        end = max(x[5] for x in ts)
        run = [x[5] - x[4] for x in ts]
        wait = [x[4] - x[3] for x in ts]
        gap = start - prev_end if prev_end is not None else 0
        rows.append((end - start, l))
        print("%4d %6d %9.2f %9.2f %8.2f %8.2f %8.2f %8.2f %8.2f  %s" % (
            l, n, start * us, end * us, (end - start) * us, statistics.median(run) * us, max(run) * us,
            statistics.median(wait) * us, gap * us, label[:60]))
        prev_end = end if prev_end is None else max(prev_end, end)
    makespan = max(x[5] for x in tasks) - min(x[3] for x in tasks)
    blocks = {}
    for l, sm, blk, s0, s1, e in tasks:
        b = blocks.setdefault(blk, [0, 0, 0])
        b[0] += e - s1
        b[1] += s1 - s0
        b[2] = max(b[2], e)
    t0 = min(x[3] for x in tasks)
    tot = makespan * len(blocks)
    run = sum(b[0] for b in blocks.values())
    wait = sum(b[1] for b in blocks.values())
    idle = sum(t0 + makespan - b[2] for b in blocks.values())
    sms = len(set(x[1] for x in tasks))
    print("makespan %.2f us, %d blocks on %d SMs: running %.1f%%, waiting %.1f%%, done early %.1f%%, other %.1f%%" % (
        makespan * us, len(blocks), sms, 100 * run / tot, 100 * wait / tot, 100 * idle / tot,
        100 * (tot - run - wait - idle) / tot))
    if top:
        print("longest spans:")
        for span, l in sorted(rows, reverse=True)[:top]:
            print("  L %d %.2f us %s" % (l, span * us, launches[l][2][:70]))


if __name__ == "__main__":
    main()
