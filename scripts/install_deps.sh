#!/usr/bin/env bash
# Installs what ember needs on Debian 12 when it is missing: a C++20 compiler, CMake, and the
# Debian packages of its dependencies. The CPU backend needs nothing from the CUDA toolkit;
# where one is installed (nvcc at /usr/local/cuda), the CUDA targets build too.
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
