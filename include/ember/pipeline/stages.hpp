#pragma once
/// \file
/// The stages a kernel is piped into: `burn_in(n)`, `thin(k)`, `record()` and
/// `track(moments, acceptance, mean_energy)`. Stages are small values; `operator|` collects them
/// into a `pipeline` type (pipeline/pipeline.hpp), which `sample` folds into one fused loop.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ember {

/// Discard the first n transitions of every chain (no draws kept, nothing tracked).
struct burn_in_stage {
  std::int64_t n;
};
/// Keep one transition in k: the k-th, 2k-th, … after burn-in.
struct thin_stage {
  std::int64_t k;
};
/// Keep the draws of every chain at every kept step in host memory (`result::samples()`).
struct record_stage {};

/// Per-kept-step diagnostics over chains, as TorchEBM's samplers report them:
/// `moments` (mean and variance per dimension), `acceptance` (fraction of accepted transitions
/// since the previous kept step), `mean_energy` (mean U over chains).
struct moments_t {};
struct acceptance_t {};
struct mean_energy_t {};
inline constexpr moments_t moments{};
inline constexpr acceptance_t acceptance{};
inline constexpr mean_energy_t mean_energy{};

template <class... Tags>
struct track_stage {
  static_assert(((std::is_same_v<Tags, moments_t> || std::is_same_v<Tags, acceptance_t> ||
                  std::is_same_v<Tags, mean_energy_t>) && ...),
                "ember::track takes moments, acceptance and mean_energy");
  template <class Tag>
  static constexpr bool has = (std::is_same_v<Tag, Tags> || ...);
};

/// `burn_in(n)`, n ≥ 0.
inline burn_in_stage burn_in(std::int64_t n) {
  if (n < 0) throw std::invalid_argument("ember::burn_in: n must be non-negative, got " + std::to_string(n));
  return {n};
}
/// `thin(k)`, k ≥ 1.
inline thin_stage thin(std::int64_t k) {
  if (k < 1) throw std::invalid_argument("ember::thin: k must be at least 1, got " + std::to_string(k));
  return {k};
}
/// `record()`.
inline constexpr record_stage record() { return {}; }
/// `track(moments, acceptance, mean_energy)`, any subset.
template <class... Tags>
constexpr track_stage<Tags...> track(Tags...) {
  return {};
}

}  // namespace ember
