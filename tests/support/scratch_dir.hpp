#pragma once
// A directory under the temporary directory that no other process uses, removed with its files
// when the test ends: ctest runs io_test and io_numpy_test at once, and a shared name let one
// rename a file into a directory the other had just removed.

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace ember_test {

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

}  // namespace ember_test
