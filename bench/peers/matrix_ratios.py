"""Tables of bench/compare_matrix.sh from its JSON lines (ember's matrix and the peers).

    python bench/peers/matrix_ratios.py FILE.jsonl [MORE.jsonl ...] [--baseline ember]

(several files: e.g. ember's matrix results and the peers' results of separate runs)

1. every configuration: ESS/s and ESS per gradient of the slowest coordinate, gradients to
   b² < 0.01 (average and worst coordinate), times and health;
2. per target, the best *healthy* configuration of each implementation (highest ess_per_s among
   health == "ok") and the baseline's ratio to each peer's, split into the sampler's share
   (ESS per gradient) and the engine's (gradients per second): ESS/s = ESS/grad × grads/s;
3. issue 13's goals: baseline ≥ 5× BlackJAX on every target both sample healthily, ≥ 10× on the
   median of those targets.
A configuration measured on several seeds (`--replicates`) is one configuration in tables 2 and 3:
the mean of its seeds' ESS/s, ESS per gradient and times, healthy only if every seed was, with the
seeds' range beside it in table 1.
Every output line starts with '#'.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys


def load(path):
    rows = []
    with open(path) as f:
        for ln in f:
            ln = ln.strip()
            if ln.startswith("{"):
                try:
                    r = json.loads(ln)
                except ValueError:
                    continue
                if "target" in r and "impl" in r and "sampler" in r:
                    rows.append(r)
    return rows


KEY = ("impl", "target", "sampler", "precision", "backend", "chains", "warmup", "draws")
MEANS = ("ess_per_s", "ess_per_grad", "sampling_s", "warmup_s", "grads_sampling", "grads_warmup", "compile_s",
         "grads_to_b2_avg", "grads_to_b2_max")


def merge_replicates(rows):
    """One row per configuration: the mean over its seeds (rows that differ only in "seed")."""
    groups = {}
    for r in rows:
        groups.setdefault(tuple(r.get(k) for k in KEY), []).append(r)
    merged = []
    for g in groups.values():
        if len(g) == 1 or any(r.get("skipped") is not None for r in g):
            merged.append(g[0])
            continue
        m = dict(g[0])
        for k in MEANS:
            v = [r[k] for r in g if r.get(k) is not None]
            m[k] = statistics.fmean(v) if len(v) == len(g) else None
        bad = sorted({h for r in g if r.get("health") != "ok" for h in str(r.get("health")).split(",")})
        m["health"] = "ok" if not bad else ",".join(bad)
        m["seeds"] = len(g)
        m["ess_per_s_range"] = (min(r["ess_per_s"] for r in g), max(r["ess_per_s"] for r in g))
        merged.append(m)
    return merged


def fmt(x, digits=3):
    if x is None:
        return "-"
    if isinstance(x, str):
        return x
    if x == 0:
        return "0"
    return f"{x:.{digits}g}"


def grads_per_s(r):
    if not r.get("sampling_s") or r.get("grads_sampling") is None:
        return None
    return r["chains"] * r["grads_sampling"] / r["sampling_s"]


def best_healthy(rows, impl, target):
    ok = [r for r in rows if r["impl"] == impl and r["target"] == target and r.get("skipped") is None
          and r.get("health") == "ok" and r.get("ess_per_s")]
    return max(ok, key=lambda r: r["ess_per_s"]) if ok else None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("jsonl", nargs="+")
    ap.add_argument("--baseline", default="ember")
    a = ap.parse_args()
    rows = merge_replicates([r for path in a.jsonl for r in load(path)])
    out = lambda s="": print("# " + s if s else "#")
    if not rows:
        out(f"no configuration lines in {', '.join(a.jsonl)}")
        return 0
    targets = list(dict.fromkeys(r["target"] for r in rows))
    impls = list(dict.fromkeys(r["impl"] for r in rows))

    out("every configuration (ess of the slowest coordinate; grads per chain; '-' = undefined)")
    hdr = (f"{'target':<24} {'impl':<9} {'sampler':<10} {'prec':<6} {'ESS/s':>9} {'ESS/grad':>9} "
           f"{'grad/s':>9} {'g→b²avg':>9} {'g→b²max':>9} {'compile':>8} {'warmup':>8} {'sample':>8}  health")
    out(hdr)
    for t in targets:
        for r in rows:
            if r["target"] != t:
                continue
            if r.get("skipped") is not None:
                out(f"{t:<24} {r['impl']:<9} {r['sampler']:<10} {r.get('precision', ''):<6} skipped: {r['skipped']}")
                continue
            out(f"{t:<24} {r['impl']:<9} {r['sampler']:<10} {r['precision']:<6} {fmt(r['ess_per_s']):>9} "
                f"{fmt(r['ess_per_grad']):>9} {fmt(grads_per_s(r)):>9} {fmt(r['grads_to_b2_avg']):>9} "
                f"{fmt(r['grads_to_b2_max']):>9} {fmt(r['compile_s']):>8} {fmt(r['warmup_s']):>8} "
                f"{fmt(r['sampling_s']):>8}  {r['health']}"
                + (f"  (mean of {r['seeds']} seeds, ESS/s {fmt(r['ess_per_s_range'][0])}–{fmt(r['ess_per_s_range'][1])})"
                   if r.get("seeds") else ""))
    out()
    peers = [i for i in impls if i != a.baseline]
    out(f"best healthy configuration per target; ratio = {a.baseline} / peer "
        "(ESS/s ratio = sampler ratio [ESS/grad] × engine ratio [grads/s])")
    out(f"{'target':<24} " + " ".join(f"{i + ' best':<26}" for i in impls) + " "
        + " ".join(f"{'vs ' + p + ' ESS/s (sampler×engine)':<40}" for p in peers))
    ratios = {p: {} for p in peers}
    for t in targets:
        best = {i: best_healthy(rows, i, t) for i in impls}
        cells = []
        for i in impls:
            b = best[i]
            cells.append(f"{(b['sampler'] + '/' + b['precision'] + ' ' + fmt(b['ess_per_s'])) if b else 'none healthy':<26}")
        rcells = []
        e = best.get(a.baseline)
        for p in peers:
            q = best[p]
            if not e or not q:
                rcells.append(f"{'n/a':<40}")
                continue
            r = e["ess_per_s"] / q["ess_per_s"]
            rs = e["ess_per_grad"] / q["ess_per_grad"]
            re = grads_per_s(e) / grads_per_s(q)
            ratios[p][t] = r
            where = "sampler" if rs < re else "engine"  # the smaller factor holds the ratio down
            gap = f", gap: {where}" if r < 5 else ""
            rcells.append(f"{fmt(r) + 'x (' + fmt(rs) + ' × ' + fmt(re) + gap + ')':<40}")
        out(f"{t:<24} " + " ".join(cells) + " " + " ".join(rcells))
    out()
    if a.baseline in impls and "blackjax" in ratios:
        rb = ratios["blackjax"]
        if rb:
            med = statistics.median(rb.values())
            below = [f"{t} {fmt(v)}x" for t, v in rb.items() if v < 5]
            out(f"issue 13 goals vs BlackJAX on {len(rb)} targets both sample healthily: median "
                f"{fmt(med)}x (goal >= 10x: {'met' if med >= 10 else 'missed'}); below 5x: "
                f"{', '.join(below) if below else 'none'}")
        else:
            out("issue 13 goals: no target with healthy configurations of both ember and BlackJAX")
    return 0


if __name__ == "__main__":
    sys.exit(main())
