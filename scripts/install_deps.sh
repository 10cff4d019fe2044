#!/usr/bin/env bash
# Installs what ember needs on Debian 12 when it is missing: a C++20 compiler, CMake, and the
# Debian packages of its dependencies. The CUDA toolkit (nvcc, CCCL) is expected at
# /usr/local/cuda; only its headers (Thrust) are needed for the CPU backend.
set -euo pipefail
# clang and libomp-dev: CI also builds and tests with clang (.ci/run).
pkgs=(g++ cmake make libboost-dev libeigen3-dev catch2 librandom123-dev libxsimd-dev clang libomp-dev)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi
if [ ! -f /usr/local/cuda/include/cccl/thrust/version.h ] && [ ! -f /usr/include/thrust/version.h ]; then
  echo "ember: Thrust (CUDA's CCCL) not found under /usr/local/cuda/include/cccl;" \
       "install the CUDA toolkit or pass -DEMBER_CCCL_INCLUDE_DIR=..." >&2
  exit 1
fi
