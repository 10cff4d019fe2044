#!/usr/bin/env bash
# ember against NumPyro on the user's model of ../shared/models/hier_logit/ (a 60-parameter
# hierarchical logistic regression, 2,000 rows; targets/hier_logit.hpp), in the same run and on the
# same data, both pinned to the same two cores: the shared simulate.py writes the data; NumPyro's
# NUTS (bench/peers/hier_logit_numpyro.py: 1,000 warm-up + 1,000 draws per chain, the second of two
# runs so its JIT is cached) with chains on parallel host devices and vectorized, and ember's default
# sampler (bench/hier_logit.cpp: chees_hmc, 1,000 + 1,000, gradients by reverse mode and by duals),
# at 4 and 16 chains. Prints every run's JSON line, then ember / NumPyro's better method in ESS per
# second of sampling and with warm-up (smallest bulk ESS over the 60 parameters).
#
# usage: [SEEDS=n] bash bench/compare_hier_logit.sh   (n seeds of ember's reverse-mode runs; needs bench/.venv-numpyro: see
#        bench/posteriordb/requirements-numpyro.txt for the two lines that make it)
set -euo pipefail
cd "$(dirname "$0")/.."
model_dir="$(cd .. && pwd)/shared/models/hier_logit"
py=bench/.venv-numpyro/bin/python
[ -x "$py" ] || { echo "bench/.venv-numpyro is missing: see bench/posteriordb/requirements-numpyro.txt" >&2; exit 2; }
pin=(); command -v taskset >/dev/null && pin=(taskset -c 0,1)
export JAX_PLATFORMS=cpu OMP_NUM_THREADS=2
data=$(mktemp -d); trap 'rm -rf "$data"' EXIT
"$py" "$model_dir/simulate.py" "$data"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target ember_hier_logit -j2 >/dev/null
for chains in 4 16; do
  for method in parallel vectorized; do
    "${pin[@]}" "$py" bench/peers/hier_logit_numpyro.py "$data" "$chains" "$method" 2>/dev/null | tee -a "$data/numpyro.txt"
  done
done
"${pin[@]}" build/bench/ember_hier_logit "$data" 2 "${SEEDS:-1}" | tee "$data/ember.txt"
"$py" - "$data" <<'PY'
import json, sys
d = sys.argv[1]
ember = [json.loads(l) for l in open(f"{d}/ember.txt") if l.startswith("{")]
peer = [json.loads(l) for l in open(f"{d}/numpyro.txt") if l.startswith("{")]
for chains in (4, 16):
    runs = [p for p in peer if p["chains"] == chains]
    best = max(runs, key=lambda p: p["min_ess_bulk"] / p["sampling_s"])
    rate = best["min_ess_bulk"] / best["sampling_s"]
    rate_all = best["min_ess_bulk"] / (best["sampling_s"] + best["warmup_s"])
    print(f"NumPyro NUTS, {chains} chains, {best['method']}: ESS/s {rate:.0f} (with warm-up {rate_all:.0f})")
    for e in ember:
        if e["chains"] == chains:
            label = e['gradient'] + (", split rows" if e.get('split_rows') else ", whole rows") + f", seed {e.get('seed', 2026)}"
            print(f"  ember chees_hmc, {label:32s}: ESS/s {e['ess_per_s']:.0f} (with warm-up {e['ess_per_s_with_warmup']:.0f}): "
                  f"{e['ess_per_s'] / rate:.1f}x ({e['ess_per_s_with_warmup'] / rate_all:.1f}x with warm-up)")
PY
