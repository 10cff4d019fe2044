#!/usr/bin/env bash
# A run's chains over MPI ranks on this machine (ember/mpi.hpp, docs/mpi.md):
#  - weak scaling: 2 ranks x 1 thread against 1 rank x 2 threads on the same chains (sampling
#    throughput within 5 % is the target), with the one-process backend::cpu's 2 threads beside
#    them through the 1-rank run (the same code path with a group of one);
#  - strong scaling: 1 to 4 ranks x 1 thread on the same chains (beyond the machine's cores the
#    ranks are oversubscribed: said in the output);
#  - warm-up communication per transition and the latency of its collectives at each rank count.
# Writes JSON lines to bench/results/<date>-mpi.jsonl (or $1) and prints the ratios.
#   bench/mpi_compare.sh [out.jsonl] [chains] [warmup] [draws]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${EMBER_BUILD:-$root/build}
out=${1:-$root/bench/results/$(date +%F)-mpi.jsonl}
chains=${2:-4096}
warmup=${3:-400}
draws=${4:-4000}
cmake --build "$build" --target ember_mpi_scaling -j2 > /dev/null
bin=$build/bench/ember_mpi_scaling
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cores=$(nproc)
: > "$out"
run() {  # ranks threads
  mpiexec --oversubscribe -n "$1" --bind-to none "$bin" --threads "$2" --chains "$chains" --warmup "$warmup" --draws "$draws" |
    sed "s/}\$/, \"cores\": $cores}/" | tee -a "$out"
}
for rep in 1 2 3; do  # interleaved, so that a change in the machine's load falls on both
  run 1 2
  run 2 1
done
for ranks in 1 2 3 4; do run "$ranks" 1; done
python3 - "$out" "$cores" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
cores = int(sys.argv[2])
print("\nweak scaling, 2 ranks x 1 thread / 1 rank x 2 threads on the same chains: each interleaved pair's ratio, and the"
      " median (target >= 0.95 in sampling)")
targets = sorted({x["target"] for x in rows}, key=[x["target"] for x in rows].index)
import statistics
for t in targets:
    for key, label in (("sampling_chain_transitions_per_s", "sampling"), ("warmup_transitions_per_s", "warm-up ")):
        a = [x[key] for x in rows if x["target"] == t and x["ranks"] == 2 and x["threads"] == 1][:3]
        b = [x[key] for x in rows if x["target"] == t and x["ranks"] == 1 and x["threads"] == 2][:3]
        r = [p / q for p, q in zip(a, b)]
        print(f"  {t:26s} {label}  " + "  ".join(f"{v:.3f}" for v in r) + f"   median {statistics.median(r):.3f}")
print("\nstrong scaling, 1 thread a rank (ranks > %d cores are oversubscribed): warm-up transitions/s, sampling chain-transitions/s,"
      " collectives and bytes a rank sends per warm-up transition, one collective's latency" % cores)
for t in targets:
    base = [x for x in rows if x["target"] == t and x["threads"] == 1]
    for x in base[-4:]:
        print(f"  {t:26s} R={x['ranks']}  warm-up {x['warmup_transitions_per_s']:9.1f}/s  sampling {x['sampling_chain_transitions_per_s']:.3g}/s"
              f"  {x['collectives_per_warmup_transition']:.2f} calls, {x['bytes_per_warmup_transition']:.0f} B"
              f"  allreduce {x['allreduce_us']:.2f} us, allgatherv {x['allgatherv_us']:.2f} us")

# The model (docs/mpi.md): a warm-up transition on R ranks of one thread costs t1/R of compute
# (t1: one rank's time for all C chains) plus k collectives of latency alpha*ceil(log2 R) each and
# the gathered bytes B (every rank's tile sums, fixed for fixed C) over a link of 10 GB/s.
import math
print("\nmodel against measurement, warm-up seconds per transition (compute over min(R, cores) cores):")
for t in targets:
    base = [x for x in rows if x["target"] == t and x["threads"] == 1][-4:]
    one = base[0]
    t1 = 1 / one["warmup_transitions_per_s"]
    for x in base:
        R = x["ranks"]
        k = x["collectives_per_warmup_transition"]
        latency = (x["allreduce_us"] + (k - 1) * x["allgatherv_us"]) * 1e-6 if R > 1 else 0.0
        model = t1 / min(R, cores) + latency
        meas = 1 / x["warmup_transitions_per_s"]
        print(f"  {t:26s} R={R}  model {model * 1e3:8.3f} ms  measured {meas * 1e3:8.3f} ms  ratio {meas / model:.2f}")
print("\nrank count at which warm-up communication passes 10 % of a transition (t1 from 1 rank x 1 thread here, scaled to C chains;"
      " at most C/256 ranks)")
two = {x["target"]: x for x in rows if x["ranks"] == 2 and x["threads"] == 1}
for t in targets:
    one = [x for x in rows if x["target"] == t and x["threads"] == 1][-4]
    k = two[t]["collectives_per_warmup_transition"]
    B = two[t]["bytes_per_warmup_transition"] * 2  # every rank's part of the gathers
    for C in (4096, 65536, 1048576):
        t1 = C / one["chains"] / one["warmup_transitions_per_s"]
        out = []
        for alpha in (1e-6, 10e-6):
            star = None
            for R in range(2, C // 256 + 1):
                comm = k * alpha * math.ceil(math.log2(R)) + B * C / one["chains"] / 10e9
                if comm > 0.1 * (t1 / R + comm):
                    star = R
                    break
            out.append(f"{star if star else '> ' + str(C // 256)}")
        print(f"  {t:26s} C={C:8d}: k={k:.2f} calls, B={B * C / one['chains']:.0f} B, t1={t1 * 1e3:.2f} ms  ->  R at 1 us: {out[0]}, at 10 us: {out[1]}")
PY
