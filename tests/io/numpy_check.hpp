#pragma once
// Reading ember's files with NumPy, when a Python with numpy is at hand: $EMBER_PYTHON (set by
// CMake to a tools/ or bench/ virtualenv if one existed at configure time), else python3.

#include "support/scratch_dir.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <system_error>

namespace ember_test {

inline std::string python() {
  char const* p = std::getenv("EMBER_PYTHON");
  return p && *p ? p : "python3";
}

// Whether NumPy can be imported. Without it, the [numpy] cases return early; under
// io_numpy_test (EMBER_NUMPY_SKIP_CODE set) the binary exits with 77, which ctest reports as a skip.
inline bool numpy_available() {
  std::string cmd = python() + " -c \"import numpy\" > /dev/null 2>&1";
  if (std::system(cmd.c_str()) == 0) return true;
  std::cout << "no Python with numpy (" << python() << "): the NumPy check is skipped\n";
  if (std::getenv("EMBER_NUMPY_SKIP_CODE")) std::exit(77);
  return false;
}

// Runs a Python script; returns its exit status.
inline int run_python(std::string const& script, std::string const& path) {
  {
    std::ofstream f(path);
    f << script;
  }
  std::string cmd = python() + " " + path;
  return std::system(cmd.c_str());
}

}  // namespace ember_test
