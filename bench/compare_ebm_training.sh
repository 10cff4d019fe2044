#!/usr/bin/env bash
# ember against TorchEBM on TorchEBM's persistent contrastive-divergence recipe (issue 29), on the
# same two cores: eight Gaussians and two moons, k = 10 and 60 Langevin steps, seeds 0, 1, 2, 1,000
# Adam steps at TorchEBM's learning rate 1e-3 and at 1e-4 (k = 10; the recipe collapses at 1e-3),
# each side with its own data generator and initial weights from the seed. Prints every JSON
# line, then per configuration the training wall time of each side (mean of the seeds), their
# ratio, and the final energy distances to held-out data.
#
# usage: bash bench/compare_ebm_training.sh [OUT.jsonl] [SEEDS]   (installs bench/.venv as compare_cpu.sh does)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
log() { echo "[compare_ebm_training $(date +%T)] $*" >&2; }
warn() { echo "[compare_ebm_training] warning: $*" >&2; }
source "$ROOT/bench/peers/env.sh"
pin_to_two_cores
setup_venv "$ROOT/bench/peers/requirements.txt" .ember-peers-installed \
    "import torch, torchebm, jax, jaxlib, blackjax, numpy, scipy, optax" "$ROOT/bench/peers/torch_cpu_deps.py"
out="${1:-$(mktemp "${TMPDIR:-/tmp}/ember-compare-ebm.XXXXXX.jsonl")}"
seeds="${2:-0 1 2}"
: > "$out"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target ember_ebm_training -j2 >/dev/null
for cfg in "eight_gaussians 10 1e-3" "two_moons 10 1e-3" "eight_gaussians 60 1e-3" "two_moons 60 1e-3" \
           "eight_gaussians 10 1e-4" "two_moons 10 1e-4"; do
  set -- $cfg
  for seed in $seeds; do
    log "$1 k=$2 lr=$3 seed $seed"
    "${PIN[@]}" build/bench/ember_ebm_training --data "$1" --k "$2" --lr "$3" --seed "$seed" --threads "$NTHREADS" \
        --report-every 250 | tee -a "$out"
    "${PIN[@]}" "$VPY" bench/peers/torchebm_train.py --data "$1" --k "$2" --lr "$3" --seed "$seed" --threads "$NTHREADS" \
        --report-every 250 2>/dev/null | tee -a "$out"
  done
done
"$VPY" - "$out" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ends = [r for r in rows if "steps" in r]
print("\ndata             k   lr     ember s (mean)  torchebm s (mean)  torchebm/ember   final ED ember | torchebm (per seed)")
keys = sorted({(r["data"], r["k"], r.get("lr", 1e-3)) for r in ends})
for d, k, lr in keys:
    e = [r for r in ends if r["impl"] == "ember" and (r["data"], r["k"], r.get("lr", 1e-3)) == (d, k, lr)]
    t = [r for r in ends if r["impl"] == "torchebm" and (r["data"], r["k"], r.get("lr", 1e-3)) == (d, k, lr)]
    if not e or not t:
        continue
    me, mt = statistics.mean(r["train_seconds"] for r in e), statistics.mean(r["train_seconds"] for r in t)
    # final energy distances: the last report line before each end line of the configuration
    eds = {"ember": [], "torchebm": []}
    last = {}
    for r in rows:
        if "energy_distance" in r:
            last[r["impl"]] = r["energy_distance"]
        elif "steps" in r and (r["data"], r["k"], r.get("lr", 1e-3)) == (d, k, lr):
            eds[r["impl"]].append(last.get(r["impl"]))
    f = lambda v: ", ".join(f"{x:.3f}" for x in v)
    print(f"{d:16s} {k:3d} {lr:<6g} {me:12.2f}  {mt:16.2f}  {mt / me:14.1f}x   {f(eds['ember'])} | {f(eds['torchebm'])}")
PY
log "lines in $out"
