#!/usr/bin/env bash
# Installs what ember needs on Debian 12 when it is missing: a C++20 compiler, CMake, and the
# Debian packages of its dependencies. The CPU backend needs nothing from the CUDA toolkit;
# where one is installed (nvcc at /usr/local/cuda), the CUDA targets build too.
set -euo pipefail
# clang and libomp-dev: CI also builds and tests with clang (.ci/run). python3-venv and python3-dev:
# the tests that compare with NumPy, SciPy and ArviZ run a Python from tools/.venv (made below), and
# ember's Python package (python/, built by ember's build into build/python) needs Python's headers.
# libopenmpi-dev and openmpi-bin: ember::mpi (ember/mpi.hpp) and its tests over 1 to 4 ranks.
pkgs=(g++ cmake make libboost-dev libeigen3-dev catch2 librandom123-dev libxsimd-dev clang libomp-dev python3-venv python3-dev
      libopenmpi-dev openmpi-bin)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi
# From PyPI into tools/.venv, which CMake finds at configure time: NumPy, SciPy and ArviZ for the
# tests that compare with them (io_numpy_test, diagnostics_arviz_compare, distributions_scipy,
# posteriordb_python, ...); nanobind, pytest and pandas for ember's Python package and its tests
# (python_tests), torch for its PyTorch cases (ember.nn on torch tensors, the training-loop
# example; PyPI's wheel brings its CUDA libraries: about 5 GB and 1.5 min here), and jax for
# ember.jax (its XLA handler builds against jaxlib's headers).
# `pip install ./python` installs that package elsewhere (docs/python.md).
root="$(cd "$(dirname "$0")/.." && pwd)"
# No pip cache (--no-cache-dir): it would keep a second copy of the wheels, about 3 GB. The
# venv takes about 6 GB, and its wheels are unpacked under $TMPDIR first: check the space before
# starting, so that a full disk is one clear sentence and not a half-made venv.
if ! "$root/tools/.venv/bin/python" -c "import numpy, scipy, arviz, pandas, nanobind, pytest, torch, jax" >/dev/null 2>&1; then
  need_kb=$((9 * 1024 * 1024))
  for d in "$root/tools" "${TMPDIR:-/tmp}"; do
    free_kb=$(df -Pk "$d" | awk 'NR == 2 { print $4 }')
    if [ "$free_kb" -lt "$need_kb" ]; then
      echo "scripts/install_deps.sh: $d has $((free_kb / 1024)) MiB free; tools/.venv (NumPy, SciPy, ArviZ, torch) needs about 9 GiB while it installs" >&2
      exit 1
    fi
  done
  rm -rf "$root/tools/.venv"
  python3 -m venv "$root/tools/.venv"
  "$root/tools/.venv/bin/pip" install -q --no-cache-dir --disable-pip-version-check numpy scipy arviz pandas nanobind pytest torch jax
fi
