"""Ratio table of the CPU comparison.

Reads the JSON lines of compare_cpu.sh (files given as arguments, or stdin;
lines not starting with '{' are ignored) and prints, for each case, every
implementation's throughput (chain_steps_per_s) relative to a baseline
(ember-simd by default) and the baseline's speed-up over it.  Every output
line starts with '#', so it can follow the JSON lines on stdout.
Usage: python bench/peers/ratios.py [--baseline ember-simd] [FILE ...]
"""

from __future__ import annotations

import argparse
import json
import sys

ORDER = ("ember-simd", "ember-scalar", "torch-eager", "torchebm", "blackjax")


def load(streams) -> list[dict]:
    rows = []
    for f in streams:
        for raw in f:
            raw = raw.strip()
            if not raw.startswith("{"):
                continue
            try:
                obj = json.loads(raw)
            except ValueError:
                continue
            if isinstance(obj, dict) and "case" in obj and "impl" in obj:
                rows.append(obj)
    return rows


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def table(rows: list[dict], baseline: str) -> list[str]:
    cases: dict[str, dict[str, dict]] = {}
    for r in rows:
        cases.setdefault(r["case"], {})[r["impl"]] = r   # last line wins
    out = [f"ratios of chain_steps_per_s (P5: gradient points per second); "
           f"'x {baseline}' = impl / {baseline} (higher is faster), "
           f"'{baseline} speed-up' = {baseline} / impl",
           f"{'case':<5} {'impl':<13} {'chain_steps/s':>13} {'seconds':>10} {'check':>6} "
           f"{'x ' + baseline:>16} {baseline + ' speed-up':>22}"]

    def key(c):
        return (len(c), c)

    for case in sorted(cases, key=key):
        impls = cases[case]
        base = impls.get(baseline)
        base_rate = base.get("chain_steps_per_s") if base else None
        names = [n for n in ORDER if n in impls] + sorted(n for n in impls if n not in ORDER)
        for name in names:
            r = impls[name]
            if "skipped" in r:
                out.append(f"{case:<5} {name:<13} skipped: {r['skipped']}")
                continue
            if "error" in r or "chain_steps_per_s" not in r:
                out.append(f"{case:<5} {name:<13} error: {r.get('error', 'no chain_steps_per_s')}")
                continue
            rate = float(r["chain_steps_per_s"])
            ok = r.get("check", {}).get("ok")
            okstr = "ok" if ok else ("FAIL" if ok is False else "-")
            if base_rate:
                rel, spd = _fmt(rate / base_rate), _fmt(base_rate / rate)
            else:
                rel = spd = "n/a"
            out.append(f"{case:<5} {name:<13} {_fmt(rate):>13} {_fmt(float(r['seconds'])):>10} "
                       f"{okstr:>6} {rel:>16} {spd:>22}")
        if not base_rate:
            out.append(f"{case:<5} (no {baseline} line for this case: ratios n/a)")
    return ["# " + line for line in out]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default="ember-simd")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    if args.files:
        streams = [open(p, encoding="utf-8") for p in args.files]
    else:
        streams = [sys.stdin]
    rows = load(streams)
    for line in table(rows, args.baseline):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
