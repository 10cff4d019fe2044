#pragma once
/// \file
/// `run_axes`: the run-time axes of a benchmark matrix: chain counts (one row per count), warm-up
/// transitions and kept draws per chain, the seed, and replicates: each configuration runs with
/// seeds seed, seed + 1, …, seed + replicates − 1, one row each (the report gives their spread). The compile-time axes (targets, samplers,
/// precisions, backends) are types and values in Hana tuples (matrix.hpp) or CMake lists.

#include <cstdint>
#include <vector>

namespace ember::benchmark {

struct run_axes {
  std::vector<std::int64_t> chains{128};
  std::int64_t warmup = 1000, draws = 1000;
  std::uint64_t seed = 1;
  std::int64_t replicates = 1;
};

}  // namespace ember::benchmark
