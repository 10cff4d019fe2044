#pragma once
/// \file
/// A run's stream key. Transition t of chain c draws from Philox with counter (c, t, …) under the
/// run's key. The key is the seed for a run from the default start x₀ ~ uniform(−2, 2)^D, and the
/// seed mixed with a hash of the start states for a run from `.init`, so a new run started from
/// another run's final states never replays that run's noise, even with the same seed
/// (docs/tuning.md). Continuing a run is `advance`, never a new `start`.

#include <ember/core/vec.hpp>
#include <ember/detail/checkpoint.hpp>  // fnv1a

#include <cstdint>
#include <span>

namespace ember::detail {

// 64-bit mixing (SplitMix64's finaliser): a stream key from the seed and a hash of the start states.
constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
template <class T, int D>
std::uint64_t stream_key(std::uint64_t seed, std::span<vec<T, D> const> init) {
  if (init.empty()) return seed;
  // FNV-1a over the bytes of every start state, then mixed with the seed.
  return mix64(seed ^ mix64(fnv1a(init.data(), init.size_bytes()) ^ 0x656D6265725F696Eull));
}

}  // namespace ember::detail
