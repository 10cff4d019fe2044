#pragma once
// Reading ember's files with NumPy, when a Python with numpy is at hand: $EMBER_PYTHON (set by
// CMake to a tools/ or bench/ virtualenv if one existed at configure time), else python3.

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <system_error>

namespace ember_test {

// A directory under the temporary directory that no other process uses, removed with its files
// when the test ends: ctest runs io_test and io_numpy_test at once, and a shared name let one
// rename a file into a directory the other had just removed.
struct scratch_dir {
  std::filesystem::path path;
  explicit scratch_dir(std::string const& stem)
      : path(std::filesystem::temp_directory_path() / (stem + "_" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path);
  }
  ~scratch_dir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  scratch_dir(scratch_dir const&) = delete;
  scratch_dir& operator=(scratch_dir const&) = delete;
  std::filesystem::path operator/(std::string const& name) const { return path / name; }
};

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
