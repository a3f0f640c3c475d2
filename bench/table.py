#!/usr/bin/env python3
"""The `make bench` table (docs/benchmarks.md): joins bench.sh's runs.tsv (every mugen run:
case, kind, file, exit status, µs, rel err, seed) with torch_ref.py's JSON (eager and
torch.compile in the same run, the floor of each case) and checks the issue's targets.

    python3 bench/table.py RUNS_TSV TORCH_JSON
"""
import json, math, sys


def main():
    runs_path, torch_path = sys.argv[1], sys.argv[2]
    runs = []
    for line in open(runs_path):
        f = line.rstrip("\n").split("\t")
        if len(f) < 7:
            continue
        case, kind, path, rc, us, err, seed = f[:7]
        runs.append(dict(case=case, kind=kind, path=path, ok=rc == "0",
                         us=float(us) if us != "-" else None, err=err, seed=seed))
    try:
        doc = json.load(open(torch_path))
    except (OSError, ValueError) as e:
        doc = dict(device="?", cases=[])
        print(f"(no PyTorch results: {e})")
    torch = {c["case"]: c for c in doc.get("cases", [])}
    cases = list(dict.fromkeys(r["case"] for r in runs))
    print(f"Device: **{doc.get('device', '?')}**, PyTorch {doc.get('torch', '?')}, {doc.get('date', '?')[:19]}\n")
    print("| case | mugen: search's best µs | rel err | recheck | its μGraph | hand-written µs | eager µs "
          "| torch.compile µs | best PyTorch µs | floor µs | speed-up vs best PyTorch | mugen / floor |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    ups, worst, all_ok, rows = [], 0.0, True, 0
    for c in cases:
        rs = [r for r in runs if r["case"] == c]
        srch = [r for r in rs if r["kind"] == "search" and r["ok"] and r["us"] is not None]
        best = min(srch, key=lambda r: r["us"]) if srch else None
        rec = next((r for r in rs if r["kind"] == "recheck"), None)
        hand = next((r for r in rs if r["kind"] == "hand"), None)
        t = torch.get(c, {})
        floor, bt = t.get("floor_us"), t.get("best_us")
        ok = best is not None and rec is not None and rec["ok"]
        all_ok &= ok
        up = bt / best["us"] if best and bt else None
        fl = best["us"] / floor if best and floor else None
        if up:
            ups.append(up)
        if fl:
            worst = max(worst, fl)
        rows += 1

        def f(v, fmt):
            return "-" if v is None else format(v, fmt)
        name = best["path"].split("/")[-1] if best else "none correct"
        n_fail = sum(1 for r in rs if r["kind"] == "search" and not r["ok"])
        if n_fail:
            name += f" ({n_fail} of {sum(1 for r in rs if r['kind'] == 'search')} failed)"
        print(f"| {c} | {f(best and best['us'], '.1f')} | {best['err'] if best else '-'} "
              f"| {'ok' if rec and rec['ok'] else 'FAIL' if rec else '-'} | {name} "
              f"| {f(hand and hand['us'] if hand and hand['ok'] else None, '.1f')} | {f(t.get('eager_us'), '.1f')} "
              f"| {f(t.get('compile_us'), '.1f')} | {f(bt, '.1f')} | {f(floor, '.1f')} "
              f"| {f(up, '.2f')}x | {f(fl, '.2f')}x |")
    gm = math.exp(sum(math.log(u) for u in ups) / len(ups)) if ups else None
    print()
    print(f"geometric mean speed-up over the {len(ups)} cases: "
          f"{'-' if gm is None else format(gm, '.2f')}x (target >= 1.5x)")
    print(f"worst mugen / floor: {worst:.2f}x (target <= 1.5x each); "
          f"cases within 1.5x of the floor: "
          f"{sum(1 for c in cases if _within(runs, torch, c))} of {rows}")
    print(f"every case correct (search's best and its recheck on new inputs): {'yes' if all_ok else 'NO'}")
    # the same best μGraphs launched plainly: no kernel a programmatic dependent (docs/runtime.md)
    plain = [(next((r for r in runs if r["case"] == c and r["kind"] == "ablation--no-pdl"), None),
              torch.get(c, {}).get("best_us")) for c in cases]
    if plain and all(r and r["ok"] and r["us"] and bt for r, bt in plain):
        gp = math.exp(sum(math.log(bt / r["us"]) for r, bt in plain) / len(plain))
        print(f"geometric mean with every kernel launched plainly (--no-pdl): {gp:.2f}x")
    flags = list(dict.fromkeys(r["kind"][len("ablation"):] for r in runs if r["kind"].startswith("ablation")))
    if flags:
        print("\nAblations: the search's best μGraph with one optimizer pass off, µs (its time with all on "
              "is the recheck run; 'refused' = does not fit without the pass, 'FAIL' = wrong result)\n")
        print("| case | all on | " + " | ".join(flags) + " |")
        print("|---|---|" + "---|" * len(flags))
        for c in cases:
            rs = [r for r in runs if r["case"] == c]
            rec = next((r for r in rs if r["kind"] == "recheck"), None)
            cells = []
            for fl in flags:
                r = next((r for r in rs if r["kind"] == "ablation" + fl), None)
                cells.append("-" if r is None else f"{r['us']:.1f}" if r["ok"] and r["us"] else
                             "FAIL" if r["us"] else "refused")
            base = f"{rec['us']:.1f}" if rec and rec["ok"] and rec["us"] else "-"
            print(f"| {c} | {base} | " + " | ".join(cells) + " |")


def _within(runs, torch, c):
    srch = [r for r in runs if r["case"] == c and r["kind"] == "search" and r["ok"] and r["us"] is not None]
    floor = torch.get(c, {}).get("floor_us")
    return bool(srch and floor and min(r["us"] for r in srch) <= 1.5 * floor)


if __name__ == "__main__":
    main()
