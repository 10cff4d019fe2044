#pragma once
/// \file
/// The stages a kernel is piped into: `warmup(n, adapters...)`, `burn_in(n)`, `thin(k)`,
/// `record()` and `track(statistics...)` (pipeline/track.hpp). Stages are small values;
/// `operator|` collects them into a `pipeline` type (pipeline/pipeline.hpp), which a run
/// (run/run.hpp) advances in fused chunks.

#include <ember/pipeline/track.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>

namespace ember {

/// Discard the first n transitions after warm-up (no draws kept, nothing tracked).
struct burn_in_stage {
  std::int64_t n;
};
/// Keep one transition in k: the k-th, 2k-th, … after burn-in.
struct thin_stage {
  std::int64_t k;
};
/// Keep the draws of every chain at every kept step in host memory (`result::samples()`).
struct record_stage {};

// --- warm-up adaptation (adapt/warmup.hpp does the work) ---

/// Step size by dual averaging (Hoffman & Gelman 2014, Stan's γ = 0.05, t₀ = 10, κ = 0.75)
/// towards `target` acceptance (0: the kernel's own, MALA 0.574, HMC 0.8, ChEES-HMC 0.651),
/// from the mean acceptance probability of all live chains at each warm-up transition (one step
/// size for all chains, reduced in a fixed order so it depends on nothing but the seed). With
/// `chees()`, the harmonic mean over chains instead, with γ = 0.2 (adapt/warmup.hpp).
struct step_size_adapter {
  double target = 0;
};
/// `step_size(per_chain)`: each chain its own step size, by its own dual averaging on its own
/// acceptance probability (same constants and target defaults as `step_size()`), kept per chain
/// after warm-up. A distinct type rather than a flag, because it changes the kernel a run
/// executes (each chain carries its ε in its state, adapt/warmup.hpp); the pooled `step_size()`
/// stays the default and its loop is unchanged. Not with `chees()`: a SIMD batch or a warp
/// integrates its chains in step, so ⌈uT/ε⌉ cannot differ between chains.
struct per_chain_step_size_adapter {
  double target = 0;
};
/// The tag of `step_size(per_chain)`.
struct per_chain_t {};
inline constexpr per_chain_t per_chain{};

/// A diagonal metric estimated in Stan's growing windows from all chains pooled, regularised as
/// Stan does: by default from draws and gradients, σᵢ² = √(Var xᵢ / Var ∂ᵢU) (nutpie's; robust to
/// chains still on their way in, adapt/covariance.hpp); `{.gradients = false}`: Stan's, the
/// draws' variance σᵢ² = Var xᵢ.
struct diagonal_mass_adapter {
  bool gradients = true;
};
/// A dense metric (inverse mass = the target's covariance, D ≤ 64), likewise.
struct dense_mass_adapter {};
/// HMC's trajectory length by ChEES (Hoffman, Radul & Sountsov 2021): Adam (β₁ = 0, β₂ = 0.95)
/// on log T, Halton-jittered trajectories, T carried into each new metric's time; the step size
/// targets harmonic-mean acceptance 0.651 (docs/tuning.md). Needs at least 2 chains.
struct chees_adapter {
  double learning_rate = 0.025;
};

namespace detail {
/// An adapter's target acceptance: 0 (the kernel's own) or in (0, 1); anything else, NaN
/// included, is refused rather than read as the default.
inline double checked_target(double target) {
  if (!(target == 0 || (target > 0 && target < 1)))
    throw std::invalid_argument("ember::step_size: target must be 0 (the kernel's own) or an acceptance rate in (0, 1), got " +
                                std::to_string(target));
  return target;
}
inline double checked_learning_rate(double rate) {
  if (!(rate > 0 && rate < 1e300))
    throw std::invalid_argument("ember::chees: learning_rate must be positive and finite, got " + std::to_string(rate));
  return rate;
}
}  // namespace detail

inline step_size_adapter step_size(step_size_adapter o = {}) { return {detail::checked_target(o.target)}; }
inline per_chain_step_size_adapter step_size(per_chain_t, step_size_adapter o = {}) { return {detail::checked_target(o.target)}; }
inline constexpr diagonal_mass_adapter diagonal_mass(diagonal_mass_adapter o = {}) { return o; }
inline constexpr dense_mass_adapter dense_mass() { return {}; }
inline chees_adapter chees(chees_adapter o = {}) { return {detail::checked_learning_rate(o.learning_rate)}; }

/// `warmup(n, adapters...)`: n transitions before burn-in during which the kernel is tuned;
/// afterwards it is frozen, so kept draws come from one fixed Markov kernel. With no adapters:
/// step size and diagonal metric.
template <class... Adapters>
struct warmup_stage {
  static_assert(((std::is_same_v<Adapters, step_size_adapter> || std::is_same_v<Adapters, per_chain_step_size_adapter> ||
                  std::is_same_v<Adapters, diagonal_mass_adapter> || std::is_same_v<Adapters, dense_mass_adapter> ||
                  std::is_same_v<Adapters, chees_adapter>) && ...),
                "ember::warmup takes step_size(), step_size(per_chain), diagonal_mass(), dense_mass() and chees()");
  template <class A>
  static constexpr bool has = (std::is_same_v<A, Adapters> || ...);
  static_assert(!(has<diagonal_mass_adapter> && has<dense_mass_adapter>),
                "ember::warmup: choose diagonal_mass() or dense_mass(), not both");
  static_assert(!(has<step_size_adapter> && has<per_chain_step_size_adapter>),
                "ember::warmup: choose step_size() or step_size(per_chain), not both");
  static_assert(!(has<per_chain_step_size_adapter> && has<chees_adapter>),
                "ember::warmup: step_size(per_chain) cannot be combined with chees(): a SIMD batch or a warp "
                "integrates its chains in step, so the number of integrator steps uT/eps cannot differ between chains");
  std::int64_t n;
  std::tuple<Adapters...> adapters;
  template <class A>
  A get() const {
    if constexpr (has<A>)
      return std::get<A>(adapters);
    else
      return A{};
  }
};

namespace detail {
/// A run makes fewer than 2³² − 1 transitions (a step index is 32 bits): no stage can count more.
inline constexpr std::int64_t max_transitions = (std::int64_t(1) << 32) - 2;
inline std::int64_t checked_count(char const* who, char const* what, std::int64_t n, std::int64_t least) {
  if (n < least || n > max_transitions)
    throw std::invalid_argument(std::string(who) + ": " + what + " must be from " + std::to_string(least) +
                                " to 4,294,967,294 (a run makes fewer than 2^32 - 1 transitions), got " + std::to_string(n));
  return n;
}
}  // namespace detail

/// `burn_in(n)`, 0 ≤ n < 2³² − 1.
inline burn_in_stage burn_in(std::int64_t n) { return {detail::checked_count("ember::burn_in", "n", n, 0)}; }
/// `thin(k)`, 1 ≤ k < 2³² − 1.
inline thin_stage thin(std::int64_t k) { return {detail::checked_count("ember::thin", "k", k, 1)}; }
/// `record()`.
inline constexpr record_stage record() { return {}; }
/// `warmup(n)` (step size and diagonal metric) or `warmup(n, step_size(), dense_mass(), ...)`.
inline warmup_stage<step_size_adapter, diagonal_mass_adapter> warmup(std::int64_t n) {
  return {detail::checked_count("ember::warmup", "n", n, 0), {}};
}
template <class A, class... As>
warmup_stage<A, As...> warmup(std::int64_t n, A a, As... as) {
  return {detail::checked_count("ember::warmup", "n", n, 0), {a, as...}};
}

}  // namespace ember
