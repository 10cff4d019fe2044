#!/usr/bin/env bash
# ember against the hand-written AVX-512 reference of P1 (../shared/reference/p1, a yardstick, not
# part of ember) in the same run: builds the reference with its README's flags and ember's
# ember_cpu_bench, then alternates them (ember, reference, [baseline]) so that a change in the
# machine's load hits all alike, and prints each one's median chain-steps/s and ember/reference.
#
# usage: bash bench/compare_reference.sh [--rounds 3] [--baseline <git rev>] [--big]
#   --baseline REV  also build ember_cpu_bench at REV (git archive into build/baseline-REV) and
#                   print ember/baseline: a before/after of a change in the same session
#   --big           also P6's size (10⁶ chains × 10³ steps; about 10 s per run)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=3 baseline="" big=0
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --baseline) baseline="$2"; shift 2 ;;
    --big) big=1; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
ref_dir="${EMBER_REFERENCE_DIR:-$(cd .. && pwd)/shared/reference/p1}"
threads="${EMBER_BENCH_THREADS:-2}"
cores="0-$((threads - 1))"

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target ember_cpu_bench -j2 >/dev/null
mkdir -p build
g++ -std=c++17 -O3 -march=native -fopenmp -ffp-contract=off -fno-math-errno -DP1_XSIMD \
  "$ref_dir/p1_cpu.cpp" -o build/p1_ref
base_bin=""
if [ -n "$baseline" ]; then
  src="build/baseline-$baseline"
  if [ ! -x "$src/build/bench/ember_cpu_bench" ]; then
    rm -rf "$src" && mkdir -p "$src"
    git archive "$baseline" | tar -x -C "$src"
    cmake -S "$src" -B "$src/build" -DCMAKE_BUILD_TYPE=Release -DEMBER_ENABLE_CUDA=OFF -DEMBER_BUILD_TESTS=OFF \
      -DEMBER_BUILD_EXAMPLES=OFF >/dev/null
    cmake --build "$src/build" --target ember_cpu_bench -j2 >/dev/null
  fi
  base_bin="$src/build/bench/ember_cpu_bench"
fi

rate() { sed -n 's/.*"chain_steps_per_s": *\([0-9.e+-]*\).*/\1/p' | head -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

run_size() {  # case chains steps
  local cs="$1" chains="$2" steps="$3" e=() r=() b=()
  for ((i = 0; i < rounds; ++i)); do
    e+=("$(EMBER_BENCH_THREADS=$threads taskset -c "$cores" build/bench/ember_cpu_bench --case "$cs" --repeats 3 \
           | grep '"ember-simd"' | rate)")
    r+=("$(taskset -c "$cores" build/p1_ref bench --impl simd --chains "$chains" --steps "$steps" --reps 3 \
           --threads "$threads" | rate)")
    if [ -n "$base_bin" ]; then
      b+=("$(EMBER_BENCH_THREADS=$threads taskset -c "$cores" "$base_bin" --case "$cs" --repeats 3 \
             | grep '"ember-simd"' | rate)")
    fi
  done
  local em rm
  em=$(printf '%s\n' "${e[@]}" | median)
  rm=$(printf '%s\n' "${r[@]}" | median)
  printf '%s (%s chains x %s steps, %s threads): ember %.3g, reference %.3g chain-steps/s, ember/reference %.2f' \
    "$cs" "$chains" "$steps" "$threads" "$em" "$rm" "$(ratio "$em" "$rm")"
  if [ -n "$base_bin" ]; then
    local bm
    bm=$(printf '%s\n' "${b[@]}" | median)
    printf ', baseline %s %.3g, ember/baseline %.3f' "$baseline" "$bm" "$(ratio "$em" "$bm")"
  fi
  printf '\n'
}

run_size P1 10000 100
if [ "$big" = 1 ]; then run_size P6 1000000 1000; fi
