#!/usr/bin/env bash
# Installs what ember needs on Debian 12 when it is missing: a C++20 compiler, CMake, and the
# Debian packages of its dependencies. The CPU backend needs nothing from the CUDA toolkit;
# where one is installed (nvcc at /usr/local/cuda), the CUDA targets build too.
set -euo pipefail
# clang and libomp-dev: CI also builds and tests with clang (.ci/run). python3-venv: the tests that
# compare with NumPy and ArviZ run a Python from tools/.venv (made below).
pkgs=(g++ cmake make libboost-dev libeigen3-dev catch2 librandom123-dev libxsimd-dev clang libomp-dev python3-venv)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi
# NumPy, SciPy and ArviZ from PyPI for the tests that compare with them (io_numpy_test,
# diagnostics_arviz_compare, distributions_scipy, posteriordb_python): a virtual environment in
# tools/.venv, which tests/CMakeLists.txt finds at configure time.
root="$(cd "$(dirname "$0")/.." && pwd)"
if ! "$root/tools/.venv/bin/python" -c "import numpy, scipy, arviz" >/dev/null 2>&1; then
  python3 -m venv "$root/tools/.venv"
  "$root/tools/.venv/bin/pip" install -q --disable-pip-version-check numpy scipy arviz
fi
# ember's ArviZ loader (python/ember_arviz: `import ember_arviz`, `ember-npz-to-arviz run.npz`),
# reinstalled each time so that it follows the tree.
"$root/tools/.venv/bin/pip" install -q --disable-pip-version-check --no-deps --force-reinstall "$root/python"
