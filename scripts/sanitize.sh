#!/usr/bin/env bash
# Builds ember's test suite under AddressSanitizer + UndefinedBehaviorSanitizer (GCC, CUDA off) in
# build-asan/ and runs it. Any sanitizer report fails the test that triggered it: UBSan does not
# recover, ASan aborts. Usage: bash scripts/sanitize.sh [ctest arguments, e.g. -R core_rng]
set -euo pipefail
cd "$(dirname "$0")/.."
flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Release -DEMBER_ENABLE_CUDA=OFF -DEMBER_BUILD_EXAMPLES=OFF \
  -DEMBER_BUILD_BENCH=OFF -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined"
cmake --build build-asan -j2
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j2 "$@"
