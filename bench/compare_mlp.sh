#!/usr/bin/env bash
# ember against PyTorch and TorchEBM on TorchEBM's MLP energy (issue 29), in the same run, on the
# same weights, pinned to the same two cores: bench/peers/mlp_torch.py writes the network's
# state_dict and times Langevin (ULA, eta = 0.01, 100 steps) by plain autograd ("torch-eager") and
# by torchebm's LangevinDynamics at 256, 4,096 and 16,384 chains on 1 and 2 threads;
# bench/mlp_langevin.cpp times ember's ULA on those weights (2 threads) beside the machine's FMA
# peak. Prints every JSON line, then ember / each peer's best thread count in chain-steps/s.
#
# usage: bash bench/compare_mlp.sh [OUT.jsonl]   (installs bench/.venv as bench/compare_cpu.sh does)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
log() { echo "[compare_mlp $(date +%T)] $*" >&2; }
warn() { echo "[compare_mlp] warning: $*" >&2; }
source "$ROOT/bench/peers/env.sh"
pin_to_two_cores
setup_venv "$ROOT/bench/peers/requirements.txt" .ember-peers-installed \
    "import torch, torchebm, jax, jaxlib, blackjax, numpy, scipy, optax" "$ROOT/bench/peers/torch_cpu_deps.py"
out="${1:-$(mktemp "${TMPDIR:-/tmp}/ember-compare-mlp.XXXXXX.jsonl")}"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target ember_mlp_langevin -j2 >/dev/null
"${PIN[@]}" "$VPY" bench/peers/mlp_torch.py --weights "$work/w.npz" --threads 1,2 | tee "$out"
"${PIN[@]}" build/bench/ember_mlp_langevin --threads "$NTHREADS" --weights "$work/w.npz" | tee -a "$out"
"$VPY" - "$out" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
lang = [r for r in rows if r.get("what") == "langevin" and "chain_steps_per_s" in r]
ember = {r["chains"]: r for r in lang if r["impl"] == "ember"}
print("\nchains  ember chain-steps/s (of FMA peak)  / torch-eager (best threads)  / torchebm (best threads)")
for c in sorted(ember):
    e = ember[c]
    line = f"{c:6d}  {e['chain_steps_per_s']:.3g} ({e['of_peak']:.0%})"
    for impl in ("torch-eager", "torchebm"):
        peers = [r for r in lang if r["impl"] == impl and r["chains"] == c]
        if peers:
            best = max(peers, key=lambda r: r["chain_steps_per_s"])
            line += f"  {e['chain_steps_per_s'] / best['chain_steps_per_s']:.2f}x ({best['chain_steps_per_s']:.3g}, {best['threads']} thr)"
    print(line)
for r in rows:
    if r.get("what") == "grad_over_value":
        print(f"784-256-256-1: one gradient = {r['ratio']:.2f} x one value ({r['grad_us']:.3g} vs {r['value_us']:.3g} us a chain)")
PY
log "lines in $out"
