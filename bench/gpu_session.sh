#!/usr/bin/env bash
# One session on a GPU machine: ember's CUDA tests, the sanitizers over them, the CUDA example, the
# GPU throughput cases (ember_cuda_bench), the benchmark matrix's CUDA configurations, and ncu's
# view of the P7 kernel. Binaries are built elsewhere (a machine without a GPU can build them all:
# see bench/README.md) and copied into BIN; everything is written under OUT, one log per step,
# packed after every step into OUT.tgz or $PACK (one file, for tools that bring few files back), and each
# step's verdict is printed as it ends.
#
# usage: bench/gpu_session.sh BIN OUT [steps...]
#   steps: tests sanitize example bench peers matrix ncu (default: all, in that order)
#   (peers: bench/peers/torch_eager.py on the GPU, P1, P2 and P6, with the machine's own PyTorch)
# BIN holds the CUDA test binaries, 03_many_chains_cuda, ember_cuda_bench and ember_matrix.
set -uo pipefail
bin=$(cd "$1" && pwd) || exit 1
out=${2%/}
shift 2
steps=${*:-tests sanitize example bench peers matrix ncu}
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
       kernel_underdamped_langevin_cuda_test"

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
    for tool in memcheck racecheck initcheck synccheck; do
      for t in $tests; do
        [ $t = energy_gaussian_cuda_test ] && continue
        extra=""
        [ $tool = memcheck ] && extra="--leak-check full"
        timeout 240 compute-sanitizer --tool $tool $extra --error-exitcode 99 "$bin/$t" \
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
    timeout 400 "$bin/ember_cuda_bench" --repeats 10 >"$out/cuda_bench.jsonl" 2>"$out/cuda_bench.err"
    note "ember_cuda_bench: rc $?"
    timeout 200 "$bin/ember_cuda_bench" --case P7 --phases --repeats 5 >>"$out/cuda_bench.jsonl" 2>>"$out/cuda_bench.err"
    note "ember_cuda_bench --phases: rc $?"
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
  peers)
    EMBER_TORCH_DEVICE=cuda EMBER_BENCH_CPUS=$(seq -s, 0 $(($(nproc) - 1))) timeout 400 \
      python3 "$root/bench/peers/torch_eager.py" --case P1,P2,P6 --repeats 10 >"$out/torch_cuda.jsonl" 2>"$out/torch_cuda.err"
    note "torch-eager on the GPU: rc $?"
    python3 - "$out/torch_cuda.jsonl" <<'PY' | tee -a "$summary"
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if "seconds" not in r:
        print("  ", r); continue
    print(f"  {r['case']:3} chains {r['chains']:>9,} steps {r['steps']:>5}: {r['seconds']*1e3:9.2f} ms "
          f"{r['chain_steps_per_s']:.3g} chain-steps/s  check ok={r['check']['ok']}  {r['version']}")
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
  *) echo "unknown step $step" >&2 ;;
  esac
  pack
done
echo "==== summary"
cat "$summary"
