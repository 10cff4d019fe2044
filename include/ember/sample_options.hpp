#pragma once
/// \file
/// `sample_options<T, D>`: the run-time settings of a run, written with designated initialisers:
/// `sample(pipe, {.chains = 100'000, .steps = 5'000, .seed = 42}, backend::cpu{})`.

#include <ember/core/vec.hpp>

#include <cstdint>
#include <span>

namespace ember {

template <class T, int D>
struct sample_options {
  std::int64_t chains = 0;  ///< independent chains, 1 ≤ chains < 2³²
  std::int64_t steps = 0;   ///< transitions after burn-in; every thin-th is kept
  std::uint64_t seed = 0;   ///< the Philox key: same seed, same draws on any backend and partition
  /// Start states, one per chain, finite; empty means x₀ ~ N(0, I) drawn from each chain's stream.
  std::span<vec<T, D> const> init = {};
};

}  // namespace ember
