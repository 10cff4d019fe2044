#!/usr/bin/env bash
# The compile time of one model and its pipeline, as a user edits it: examples/12_model.cpp
# (eight schools with named parameters, ChEES-HMC with record() and record_stats(), a posterior
# with two derived quantities, its summary and an .npz file) built in a project of its own that
# adds ember with add_subdirectory, in Release, two ways:
#   plain  add_executable + ember::ember (what a user gets by default: -O3, every header parsed);
#   quick  the same plus ember_quick_compile (cmake/ember_quick_compile.cmake).
# Each is built once (the quick one's precompiled header and ember_host_code with it, timed), then
# its source is touched and rebuilt ROUNDS times, alternating the two: wall seconds of each
# rebuild (compile and link), median and range, and the ratio. Both binaries then write their
# draws, which must be bit-identical.
# Usage: bash bench/compile_time.sh [ROUNDS (5)] [CXX (c++)]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-5}
cxx=${2:-c++}
work=$(mktemp -d /tmp/ember_compile_time.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src"
cp "$root/examples/12_model.cpp" "$work/src/plain.cpp"
cp "$root/examples/12_model.cpp" "$work/src/quick.cpp"
cat > "$work/src/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.25)
project(ember_compile_time LANGUAGES CXX)
add_subdirectory($root ember)
add_executable(plain plain.cpp)
target_link_libraries(plain PRIVATE ember::ember)
add_executable(quick quick.cpp)
target_link_libraries(quick PRIVATE ember::ember)
ember_quick_compile(quick)
EOF
cmake -S "$work/src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" \
  -DEMBER_BUILD_TESTS=OFF -DEMBER_BUILD_EXAMPLES=OFF -DEMBER_BUILD_BENCH=OFF -DEMBER_ENABLE_CUDA=OFF > "$work/configure.log"
seconds() {  # wall seconds of a command
  local t0 t1
  t0=$(date +%s%N)
  "$@" > /dev/null
  t1=$(date +%s%N)
  python3 -c "print(($t1 - $t0) / 1e9)"
}
first_host=$(seconds cmake --build "$work/build" --target ember_host_code)
first_quick=$(seconds cmake --build "$work/build" --target quick)
first_plain=$(seconds cmake --build "$work/build" --target plain)
plain=()
quick=()
for ((i = 0; i < rounds; ++i)); do
  touch "$work/src/plain.cpp" "$work/src/quick.cpp"
  plain+=("$(seconds cmake --build "$work/build" --target plain)")
  quick+=("$(seconds cmake --build "$work/build" --target quick)")
done
"$work/build/plain" "$work/plain.npz" > /dev/null
"$work/build/quick" "$work/quick.npz" > /dev/null
same=$(python3 -c 'import sys, zipfile; a, b = (zipfile.ZipFile(f).read("draws.npy") for f in sys.argv[1:]); print("yes" if a == b else "NO")' \
  "$work/plain.npz" "$work/quick.npz")
python3 - "$cxx" "$first_host" "$first_quick" "$first_plain" "$same" "${plain[*]}" "${quick[*]}" <<'EOF'
import json, platform, statistics, subprocess, sys
cxx, host, first_quick, first_plain, same = sys.argv[1:6]
plain = [float(x) for x in sys.argv[6].split()]
quick = [float(x) for x in sys.argv[7].split()]
version = subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
line = {
    "bench": "compile_time", "source": "examples/12_model.cpp", "compiler": version, "machine": platform.processor() or platform.machine(),
    "rebuild_plain_s": plain, "rebuild_quick_s": quick,
    "median_plain_s": round(statistics.median(plain), 2), "median_quick_s": round(statistics.median(quick), 2),
    "ratio_plain_over_quick": round(statistics.median(plain) / statistics.median(quick), 2),
    "first_build_host_code_s": round(float(host), 2),
    "first_build_quick_s (precompiled header and unit)": round(float(first_quick), 2),
    "first_build_plain_s": round(float(first_plain), 2),
    "draws_identical": same,
}
print(json.dumps(line))
print(f"rebuild of examples/12_model.cpp after an edit ({len(plain)} rounds, median [range]):")
print(f"  plain  {statistics.median(plain):5.2f} s [{min(plain):.2f}, {max(plain):.2f}]")
print(f"  quick  {statistics.median(quick):5.2f} s [{min(quick):.2f}, {max(quick):.2f}]   plain/quick {statistics.median(plain) / statistics.median(quick):.2f}x")
print(f"  once: ember_host_code {float(host):.2f} s, quick's precompiled header and first build {float(first_quick):.2f} s")
print(f"  draws bit-identical: {same}")
EOF
