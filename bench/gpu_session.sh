#!/usr/bin/env bash
# One session on a GPU machine: ember's CUDA tests, the sanitizers over them, the CUDA example, the
# GPU throughput cases (ember_cuda_bench), the benchmark matrix's CUDA configurations, and ncu's
# view of the P7 kernel. Binaries are built elsewhere (a machine without a GPU can build them all:
# see bench/README.md) and copied into BIN; everything is written under OUT, one log per step,
# packed after every step into OUT.tgz or $PACK (one file, for tools that bring few files back), and each
# step's verdict is printed as it ends.
#
# usage: bench/gpu_session.sh BIN OUT [steps...]
#   steps: tests sanitize example bench layout warmup bayes mlp peers unroll matrix ncu copies
#   laps ncu_team (default: all but unroll, copies, laps and ncu_team, in that order)
#   (layout: ember_team_layout, one chain's logistic gradient over a warp three ways; bayes:
#   ember_bayes_suite_cuda, the logistic regression at 4-1,024 chains with one thread per
#   chain and with teams, and the d = 10 standard normal's ESS/s; peers: bench/peers/gpu_peers.sh,
#   P1 and P7 for torch eager, torch.compile, TorchEBM, BlackJAX and JAX on the GPU, with the
#   machine's own PyTorch and JAX and the wheels of .whl/; unroll: the A/B of docs/decisions/
#   2026-11-26-device-normals-unrolled.md, ember_matrix_normals_unroll0/4 built from the commit
#   before 601a7db; copies: ember_cuda_bench --copies and --case laps, where a recording's time goes;
#   laps: the d = 10 normal's rows before and after (ember_bayes_suite_cuda_base), and P7's phases;
#   ncu_team: ncu's full set over one sampling chunk of the logistic regression's team kernel at
#   128 chains)
#   Environment: PEERS_ARGS (gpu_peers.sh's arguments for every peer, e.g. "--deadline 150"), SANITIZE_TOOLS, SANITIZE_TESTS, SANITIZE_TIMEOUT, SANITIZE_ARGS (a Catch test filter)
#   (default: the four tools over every test binary
#   but energy_gaussian_cuda_test); ROUNDS, UNROLL_CHAINS for unroll; BENCH_CASES for bench.
# BIN holds the CUDA test binaries, 03_many_chains_cuda, ember_cuda_bench, ember_team_layout,
# ember_bayes_suite_cuda[_base], ember_mlp_langevin_cuda and ember_matrix.
set -uo pipefail
bin=$(cd "$1" && pwd) || exit 1
out=${2%/}
shift 2
steps=${*:-tests sanitize example bench layout warmup bayes mlp peers matrix ncu}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
summary=$out/summary.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
pack() { tar -czf "${PACK:-$out.tgz}" -C "$(dirname "$out")" "$(basename "$out")"; }

{
  date -u '+%Y-%m-%d %H:%M UTC'
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
  nvcc --version 2>/dev/null | tail -1
  nproc
} >"$out/machine.txt" 2>&1
note "machine: $(tr '\n' ';' <"$out/machine.txt")"

tests="backend_cuda_test backend_cuda_sampler_checks_test energy_custom_energy_cuda_test energy_gaussian_cuda_test
       energy_gaussian_extern_cuda_test ad_model_cuda_test kernel_underdamped_langevin_cuda_test energy_mlp_cuda_test"

for step in $steps; do
  case $step in
  tests)
    for t in $tests; do
      s=$(date +%s.%N)
      timeout 300 "$bin/$t" --durations yes >"$out/test-$t.log" 2>&1
      rc=$?
      note "test $t: rc $rc, $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $s }") s; $(grep -E '^(All tests passed|test cases:)' "$out/test-$t.log" | tail -1)"
    done
    ;;
  sanitize)
    # Each tool over every test binary but energy_gaussian_cuda_test, whose one GPU case
    # (gaussian<float, 784>, 2U chi-squared) had not finished after 240 s under initcheck and
    # 370 s under memcheck (2026-11-23, H100); its data-view path (a table copied to device
    # memory) is also energy_custom_energy_cuda_test's.
    for tool in ${SANITIZE_TOOLS:-memcheck racecheck initcheck synccheck}; do
      for t in ${SANITIZE_TESTS:-$tests}; do
        [ $t = energy_gaussian_cuda_test ] && continue
        extra=""
        [ $tool = memcheck ] && extra="--leak-check full"
        timeout "${SANITIZE_TIMEOUT:-240}" compute-sanitizer --tool $tool $extra --error-exitcode 99 "$bin/$t" ${SANITIZE_ARGS:+"$SANITIZE_ARGS"} \
          >"$out/sanitize-$tool-$t.log" 2>&1
        rc=$?
        note "sanitize $tool $t: rc $rc; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitize-$tool-$t.log" | tail -1)"
      done
    done
    ;;
  example)
    timeout 120 "$bin/03_many_chains_cuda" >"$out/example-03.log" 2>&1
    note "example 03: rc $?"
    sed 's/^/  /' "$out/example-03.log" | tee -a "$summary"
    ;;
  bench)
    if [ -n "${BENCH_CASES:-}" ]; then  # only these cases (e.g. "P1 P7", the peers' cases), 5 repeats, no phases
      for c in $BENCH_CASES; do
        timeout 200 "$bin/ember_cuda_bench" --case "$c" --repeats 5 >>"$out/cuda_bench.jsonl" 2>>"$out/cuda_bench.err"
        note "ember_cuda_bench --case $c: rc $?"
      done
    else
      timeout 400 "$bin/ember_cuda_bench" --repeats 10 >"$out/cuda_bench.jsonl" 2>"$out/cuda_bench.err"
      note "ember_cuda_bench: rc $?"
      timeout 200 "$bin/ember_cuda_bench" --case P7 --phases --repeats 5 >>"$out/cuda_bench.jsonl" 2>>"$out/cuda_bench.err"
      note "ember_cuda_bench --phases: rc $?"
    fi
    python3 - "$out/cuda_bench.jsonl" <<'PY' | tee -a "$summary"
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if "start_s" in r:
        print(f"  P7 phases, chains {r['chains']:>9,}: start {r['start_s']*1e3:8.2f} ms, advance {r['advance_s']*1e3:8.2f} ms "
              f"({r['advance_chain_steps_per_s']:.3g} chain-steps/s), result {r['result_s']*1e3:8.2f} ms")
        continue
    print(f"  {r['case']:3} chains {r['chains']:>9,} steps {r['steps']:>5}: {r['seconds']*1e3:9.2f} ms "
          f"{r['chain_steps_per_s']:.3g} chain-steps/s  check ok={r['check']['ok']}")
PY
    ;;
  layout)
    timeout 120 "$bin/ember_team_layout" "$root/data/breast_cancer.csv" >"$out/team_layout.txt" 2>&1
    note "ember_team_layout: rc $?"
    tee -a "$summary" <"$out/team_layout.txt"
    ;;
  warmup)
    # Every suite in BIN: _base (an earlier tree's headers), this tree's, and bench/ab's variants
    # (bench/ab/build_variants.sh), alternated; the suite appends to its file, so a reused OUT starts clean.
    rm -f "$out"/warmup*.jsonl
    for r in 1 2; do
      for v in _base "" $(cd "$bin" && ls ember_bayes_suite_cuda_ab_* 2>/dev/null | sed 's/^ember_bayes_suite_cuda//'); do
        [ -x "$bin/ember_bayes_suite_cuda$v" ] || continue
        EMBER_DATA_DIR=$root/data timeout 120 "$bin/ember_bayes_suite_cuda$v" --case logistic --chains "${WARMUP_CHAINS:-128,1024}" \
          --one-thread none --jsonl "$out/warmup$v.jsonl" >"$out/warmup$v-round$r.txt" 2>&1
        note "ember_bayes_suite_cuda$v, round $r: rc $?"
      done
    done
    python3 - "$out" <<'PY' | tee -a "$summary"
import json, os, statistics, sys
import glob
for f in sorted(glob.glob(os.path.join(sys.argv[1], "warmup*.jsonl"))):
    v = os.path.basename(f)[len("warmup"):-len(".jsonl")]
    rows = {}
    for l in open(f):
        r = json.loads(l)
        rows.setdefault(r["chains"], []).append(r)
    for c, rs in sorted(rows.items()):
        w = statistics.median(r["warmup_s"] / r["grads_warmup"] for r in rs) * 1e6
        s = statistics.median(r["sampling_s"] / r["grads_sampling"] for r in rs) * 1e6
        print(f"  warm-up {(v.lstrip('_') or 'this tree'):16} chains {c:>5}: {w:7.1f} us a gradient in warm-up, {s:6.1f} in sampling, "
              f"ratio {w / s:5.2f} ({len(rs)} runs, health {','.join(r['health'] for r in rs)})")
PY
    ;;
  bayes)
    # BAYES_RUNS: one set of arguments per line (default: the whole suite in one call)
    while IFS= read -r args; do
      # shellcheck disable=SC2086
      EMBER_DATA_DIR=$root/data timeout "${BAYES_TIMEOUT:-300}" "$bin/ember_bayes_suite_cuda" $args --jsonl "$out/bayes.jsonl" >>"$out/bayes.txt" 2>&1
      note "ember_bayes_suite_cuda $args: rc $?"
    done <<<"${BAYES_RUNS:-}"
    grep -E '^\| (breast|standard|hier)' "$out/bayes.txt" | tee -a "$summary"
    ;;
  mlp)
    if [ -d "$root/.whl" ] && compgen -G "$root/.whl/torchebm*.whl" >/dev/null; then
      python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$root"/.whl/torchebm*.whl &&
        export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
    fi
    PYTHONUNBUFFERED=1 timeout 150 python3 "$root/bench/peers/mlp_torch.py" --device cuda --weights "$out/mlp_weights.npz" \
      --chains "${MLP_CHAINS:-256,1024,4096,8192,16384}" >"$out/mlp.jsonl" 2>"$out/mlp-torch.err"
    note "mlp_torch.py --device cuda: rc $?"
    timeout 120 "$bin/ember_mlp_langevin_cuda" --weights "$out/mlp_weights.npz" --chains "${MLP_CHAINS:-256,1024,4096,8192,16384}" \
      >>"$out/mlp.jsonl" 2>"$out/mlp-ember.err"
    note "ember_mlp_langevin_cuda: rc $?"
    python3 - "$out/mlp.jsonl" <<'PY' | tee -a "$summary"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
by = {}
for r in rows:
    if "chain_steps_per_s" in r:
        by.setdefault(r["chains"], {})[r["impl"]] = r["chain_steps_per_s"]
    else:
        print("  ", r)
for c, v in sorted(by.items()):
    e = v.get("ember-cuda", float("nan"))
    print(f"  mlp chains {c:>6}: ember-cuda {e:.3g} chain-steps/s; "
          + "; ".join(f"{k} {x:.3g} ({e / x:.1f}x)" for k, x in sorted(v.items()) if k != "ember-cuda"))
PY
    ;;
  peers)
    # shellcheck disable=SC2086
    timeout 400 bash "$root/bench/peers/gpu_peers.sh" "$out/peers.jsonl" ${PEERS_ARGS:-} >"$out/peers.txt" 2>&1
    note "bench/peers/gpu_peers.sh: rc $?"
    tail -40 "$out/peers.txt" | tee -a "$summary"
    ;;
  unroll)
    # The A/B of docs/decisions/2026-11-26-device-normals-unrolled.md: the same CUDA configurations
    # with every Philox block of a draw of normals unrolled (0) and four per loop iteration (4),
    # alternately, ROUNDS times each. Same draws both ways (equal ESS is checked); unroll4/unroll0
    # per configuration (median over rounds), and the geometric means over the configurations that
    # changed and over the control (two_mode_mixture x float, the same code in both).
    for r in $(seq "${ROUNDS:-2}"); do
      for n in 0 4; do
        timeout 280 "$bin/ember_matrix_normals_unroll$n" --chains "${UNROLL_CHAINS:-128,1024}" --warmup 300 --draws 300 \
          --jsonl "$out/unroll$n-round$r.jsonl" >"$out/unroll$n-round$r.txt" 2>&1
        note "ember_matrix_normals_unroll$n, round $r: rc $?"
      done
    done
    python3 - "$out" <<'PY' | tee -a "$summary"
import glob, json, math, statistics, sys
rows = {}
for n in (0, 4):
    for f in sorted(glob.glob(f"{sys.argv[1]}/unroll{n}-round*.jsonl")):
        for l in open(f):
            r = json.loads(l)
            if r.get("skipped"):
                continue
            key = (r["target"], r["sampler"], r["precision"], r["chains"])
            rows.setdefault(key, {0: [], 4: []})[n].append(r)
changed, control = [], []
print(f"  {'configuration':46} {'chains':>6} {'sampling 4/0':>12} {'warm-up 4/0':>11} same ESS")
for key, v in sorted(rows.items()):
    if not v[0] or not v[4]:
        continue
    s = statistics.median(r["sampling_s"] for r in v[4]) / statistics.median(r["sampling_s"] for r in v[0])
    w = statistics.median(r["warmup_s"] for r in v[4]) / statistics.median(r["warmup_s"] for r in v[0])
    same = v[0][0]["ess_bulk_x"] == v[4][0]["ess_bulk_x"]
    (control if key[0] == "two_mode_mixture" and key[2] == "float" else changed).append((s, w))
    print(f"  {'__'.join(key[:3]):46} {key[3]:>6} {s:12.3f} {w:11.3f} {same}")
gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")
for name, xs in (("changed", changed), ("control", control)):
    print(f"  {name}: {len(xs)} rows, geometric mean sampling 4/0 {gm([a for a, _ in xs]):.3f}, "
          f"warm-up 4/0 {gm([b for _, b in xs]):.3f}")
PY
    ;;
  matrix)
    # The matrix's CUDA configurations at its CPU chain count (128) and at a GPU-sized one.
    timeout 500 "$bin/ember_matrix" --only __cuda --chains 128,1024 --warmup 1000 --draws 1000 \
      --jsonl "$out/matrix-cuda.jsonl" >"$out/matrix-cuda.txt" 2>&1
    note "ember_matrix (cuda): rc $?"
    ;;
  ncu)
    # P7: the fused kernel alone (duration, throughput, occupancy) at 10^5, 10^6 and 10^7 chains.
    # A sample() of 1000 transitions is two launches (a 256-transition chunk, then the 744 left):
    # these are the timed call's two, after the warm-up call's two. (The figures of 2026-11-23 in
    # docs/performance.md were taken with --launch-skip 1 --launch-count 1: the warm-up call's
    # 744-transition chunk.)
    for n in 100000 1000000 10000000; do
      timeout 200 ncu --kernel-name regex:fused_chains --launch-skip 2 --launch-count 2 \
        --section SpeedOfLight --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis \
        "$bin/ember_cuda_bench" --case P7 --chains $n --repeats 1 >"$out/ncu-p7-$n.txt" 2>&1
      note "ncu P7 $n chains: rc $?; $(grep -E '^ +(Duration|Compute \(SM\) Throughput|Memory Throughput|Achieved Occupancy|Registers Per Thread)' "$out/ncu-p7-$n.txt" | tr -s ' ' | tr '\n' ';')"
    done
    ;;
  copies)
    timeout 120 "$bin/ember_cuda_bench" --copies 164 >"$out/copies.jsonl" 2>&1
    note "ember_cuda_bench --copies 164: rc $?"
    for n in 256 4096; do
      timeout 120 "$bin/ember_cuda_bench" --case laps --chains $n --repeats 5 >>"$out/copies.jsonl" 2>&1
      note "ember_cuda_bench --case laps --chains $n: rc $?"
    done
    tee -a "$summary" <"$out/copies.jsonl"
    ;;
  laps)
    # The d = 10 normal's rows (LAPS's comparison) from a suite built over an earlier tree's
    # headers (_base) and this one, then P7's phases (the result's copies at 10^5-10^7 chains).
    rm -f "$out"/laps*.jsonl
    for v in _base ""; do
      [ -x "$bin/ember_bayes_suite_cuda$v" ] || continue
      timeout 150 "$bin/ember_bayes_suite_cuda$v" --case normal10 --jsonl "$out/laps$v.jsonl" >"$out/laps$v.txt" 2>&1
      note "ember_bayes_suite_cuda$v --case normal10: rc $?"
    done
    python3 - "$out" <<'PY' | tee -a "$summary"
import json, os, sys
for v in ("_base", ""):
    f = os.path.join(sys.argv[1], f"laps{v}.jsonl")
    if not os.path.exists(f):
        continue
    rows = [json.loads(l) for l in open(f)]
    for r in rows:
        if r.get("sampling_s") is None or r.get("ess_per_s") is None:
            print(f"  normal10 {('before' if v else 'after'):6} chains {r['chains']:>6}: no figures ({r.get('health')}, skipped {r.get('skipped')})")
            continue
        print(f"  normal10 {('before' if v else 'after'):6} {r['precision']:6} chains {r['chains']:>6}: sampling {r['sampling_s']*1e3:8.2f} ms, "
              f"warm-up {r['warmup_s']*1e3:8.2f} ms, ESS/s {r['ess_per_s']:.3g}, health {r['health']}")
    by = {(r['precision'], r['chains']): r for r in rows if r.get("ess_min") is not None and r.get("sampling_s")}
    if ("float", 256) in by and ("float", 4096) in by:
        print(f"  LAPS comparison ({'before' if v else 'after'}): {by[('float', 256)]['ess_min']:.4g} / {by[('float', 4096)]['sampling_s']:.4g} s = "
              f"{by[('float', 256)]['ess_min'] / by[('float', 4096)]['sampling_s']:.3g} ESS/s")
PY
    timeout 200 "$bin/ember_cuda_bench" --case P7 --phases --repeats 5 >"$out/p7-phases.jsonl" 2>&1
    note "ember_cuda_bench --case P7 --phases: rc $?"
    tee -a "$summary" <"$out/p7-phases.jsonl"
    ;;
  ncu_team)
    # The 200 warm-up transitions are a launch each; the 201st launch is the first sampling chunk.
    EMBER_DATA_DIR=$root/data timeout 300 ncu --clock-control none --kernel-name regex:fused_chains --launch-skip 200 --launch-count 1 \
      --set full "$bin/ember_bayes_suite_cuda" --case logistic --chains 128 --one-thread none --warmup 200 --draws 300 \
      >"$out/ncu-team-logistic-128.txt" 2>&1
    note "ncu team logistic 128: rc $?; $(grep -E '^ +(Duration|Compute \(SM\) Throughput|Memory Throughput|Achieved Occupancy|Registers Per Thread|Issue Slots Busy|Local Memory Spilling)' "$out/ncu-team-logistic-128.txt" | tr -s ' ' | tr '\n' ';')"
    ;;
  *) echo "unknown step $step" >&2 ;;
  esac
  pack
done
echo "==== summary"
cat "$summary"
