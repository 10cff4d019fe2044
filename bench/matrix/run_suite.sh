#!/bin/sh
# Runs ember's benchmark matrix (bench/matrix) and saves, under bench/results/:
#   <date>-matrix.jsonl  one JSON line per configuration (docs/benchmarking.md's format)
#   <date>-matrix.txt    the machine, the command, and the tables with compile times
# then draws docs/images/benchmark_matrix.png (ESS/s, log scale) with bench/matrix/plot.py.
# usage: bench/matrix/run_suite.sh [build dir] [extra options for the matrix, e.g. --chains 64]
set -e
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
[ $# -gt 0 ] && shift
cmake --build "$build" -j2 --target ember_matrix ember_matrix_ula  # ember_matrix is not in the default build
date=$(date -u +%Y-%m-%d)
jsonl=$root/bench/results/$date-matrix.jsonl
txt=$root/bench/results/$date-matrix.txt
{
  echo "# ember benchmark matrix, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "# machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# compiler: $(c++ --version | head -1); options: --chains 128 --warmup 1000 --draws 1000 $*"
} >"$txt"
"$build/bench/matrix/ember_matrix" --chains 128 --warmup 1000 --draws 1000 --jsonl "$jsonl.main" "$@" >>"$txt"
"$build/bench/matrix/ember_matrix_ula" --chains 128 --warmup 1000 --draws 1000 --jsonl "$jsonl.ula" "$@" >>"$txt"
cat "$jsonl.main" "$jsonl.ula" >"$jsonl"
rm -f "$jsonl.main" "$jsonl.ula"
python=python3
for venv in "$root/tools/.venv" "$root/bench/.venv"; do
  [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import matplotlib" 2>/dev/null && python=$venv/bin/python && break
done
"$python" "$root/bench/matrix/plot.py" "$root/docs/images/benchmark_matrix.png" "$jsonl"
echo "wrote $jsonl, $txt and docs/images/benchmark_matrix.png"
