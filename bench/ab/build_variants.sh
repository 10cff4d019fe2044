#!/usr/bin/env bash
# Builds ember_bayes_suite_cuda over this tree's headers with each patch of bench/ab/ applied on its
# own, as BIN/ember_bayes_suite_cuda_ab_<name>, for bench/gpu_session.sh's `warmup` step, which
# times every ember_bayes_suite_cuda* in BIN against each other. A patch here is a change that a GPU
# must decide (measured, then kept as code or deleted with its patch); none is part of the library.
#
#   warmup-rolled.patch  reduce_tiles sums its values in a loop left rolled (1.2-1.8 s less nvcc
#                        in a d = 100 matrix unit; suspected to slow the warm-up's reductions)
#   warmup-mapped.patch  reduce() writes its sums into mapped pinned host memory: a reduction is
#                        its launches and one wait, no copy call
#   warmup-nowait.patch  an observed warm-up transition launches without a wait; the reduction
#                        after it waits (and names it on a failure)
#   team-smem.patch      a regression's rows and responses copied into each block's shared memory
#                        when chains run in teams (a member reads its own row: 32 cache lines a
#                        warp load from global memory; no bank conflicts at an odd row stride);
#                        compiled here, never run: the suite's health column checks its draws
#
# usage: bench/ab/build_variants.sh BIN [patch names...]   (default: every patch here)
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: $0 BIN [patch names...]" >&2
  exit 2
fi
bin=$(mkdir -p "$1" && cd "$1" && pwd)
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
names=${*:-$(cd "$root/bench/ab" && ls *.patch | sed 's/\.patch$//')}
nvcc=${NVCC:-nvcc}
for name in $names; do
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
  cp -r "$root/include" "$dir/include"
  (cd "$dir" && patch -s -p1 <"$root/bench/ab/$name.patch")
  "$nvcc" -O3 -DNDEBUG -arch=sm_90 -std=c++20 -DEMBER_DATA_DIR="\"$root/data\"" -I"$dir/include" -isystem=/usr/include/eigen3 \
    "$root/bench/bayes_suite.cu" -o "$bin/ember_bayes_suite_cuda_ab_$name" -lgomp -lcudart_static -lrt -lpthread -ldl
  rm -rf "$dir"
  echo "built $bin/ember_bayes_suite_cuda_ab_$name"
done
