#!/usr/bin/env python3
"""ESS per second of every measured configuration, per target and sampler, on a log scale.

usage: python3 bench/matrix/plot.py OUT.png RESULTS.jsonl [MORE.jsonl ...]
                                    [--precision float] [--samplers hmc,chees_hmc] [--title TEXT]

Reads the JSON lines of the benchmark matrix (ember's, and bench/peers' in the same format);
skipped rows are left out, and so are rows of other precisions or samplers when those options
are given. A series is (implementation, sampler, precision, backend), and its chain count where
a configuration ran at several. A configuration that failed a health gate is drawn pale and hatched
with a red edge and its gates written above it: its speed is not a result. A configuration run on
several seeds (the matrix's --replicates) is one bar at the seeds' mean with an error bar over
their range, unhealthy if any seed was. Works on any matrix's JSON lines, ember's own or a user's
(ember_add_benchmark_matrix). Needs only matplotlib.
"""
import argparse
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(out, paths, precision=None, samplers=None, title=None):
    rows = []
    for path in paths:
        with open(path) as f:
            rows += [json.loads(line) for line in f if line.strip().startswith("{")]
    rows = [r for r in rows if r["skipped"] is None and r["ess_per_s"] is not None
            and (precision is None or r["precision"] == precision) and (samplers is None or r["sampler"] in samplers)]
    if not rows:
        sys.exit("plot.py: no measured configurations in " + ", ".join(paths))
    targets = list(dict.fromkeys(r["target"] for r in rows))
    # Chain counts name the series only where one configuration ran at several.
    counts = {}
    for r in rows:
        counts.setdefault((r["impl"], r["sampler"], r["precision"], r["backend"], r["target"]), set()).add(r["chains"])
    by_chains = any(len(c) > 1 for c in counts.values())

    def series_of(r):
        key = (r["impl"], r["sampler"], r["precision"], r["backend"])
        return key + ((f"{r['chains']} chains",) if by_chains else ())
    series = list(dict.fromkeys(series_of(r) for r in rows))
    width = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(max(11, 0.22 * len(targets) * len(series)), 6))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, key in enumerate(series):
        label = " ".join(key)
        for i, t in enumerate(targets):
            match = [r for r in rows if r["target"] == t and series_of(r) == key]
            if not match:
                continue
            values = [r["ess_per_s"] for r in match]
            mean = sum(values) / len(values)
            x = i - 0.4 + (k + 0.5) * width
            bad = sorted({h for r in match if r["health"] != "ok" for h in r["health"].split(",")})
            healthy = not bad
            yerr = [[mean - min(values)], [max(values) - mean]] if len(values) > 1 else None
            ax.bar(x, mean, width, color=colors[k % len(colors)], alpha=1.0 if healthy else 0.3,
                   hatch=None if healthy else "xxx", edgecolor="black" if healthy else "red", linewidth=0.5,
                   label=label, yerr=yerr, capsize=2 if yerr else 0)
            label = None  # one legend entry per series
            if not healthy:
                ax.text(x, max(values) * 1.2, " ".join(bad), ha="center", va="bottom",
                        fontsize=5, color="red", rotation=90)
    ax.set_yscale("log")
    ax.set_xticks(range(len(targets)))
    ax.set_xticklabels(targets, rotation=25, ha="right")
    ax.set_ylabel("ESS/s: min over coordinates of bulk ESS of x and x², per sampling second")
    ax.legend(fontsize=7, ncol=2)
    ax.set_title(title or "Benchmark matrix: ESS per second (pale, hatched red: a health gate failed)")
    fig.tight_layout()
    fig.savefig(out, dpi=130)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("out")
    ap.add_argument("results", nargs="+")
    ap.add_argument("--precision")
    ap.add_argument("--samplers", type=lambda v: v.split(","))
    ap.add_argument("--title")
    a = ap.parse_args()
    main(a.out, a.results, a.precision, a.samplers, a.title)
