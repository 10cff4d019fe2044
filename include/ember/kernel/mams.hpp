#pragma once
/// \file
/// `mams(U, {.warmup = 1000})`: Metropolis-adjusted microcanonical HMC with its warm-up, nothing
/// left to choose but the warm-up's length. It is `adjusted_mclmc(U, {...}) | warmup(n,
/// approach(), step_size(), auto_mass(), mams_length())`: HMC trajectories until the first
/// metric window closes, so chains started far away arrive (adapt/approach.hpp), the step size by
/// dual averaging towards the kernel's acceptance 0.9 (the MAMS paper's), a metric in Stan's
/// windows, diagonal or dense where the coordinates correlate enough to pay (as chees_hmc's and
/// nuts's defaults; `mams(U, {...}, diagonal_mass())` fixes the kind: BlackJAX's MAMS is diagonal),
/// the mean trajectory length L from the chains' spread and decorrelation
/// (adapt/mams_length.hpp). Stages
/// follow with `|`: `sample(mams(U) | record(), {.chains = 64, .steps = 1000})`. Needs at least
/// 2 chains and 2 dimensions (docs/tuning.md says when it pays over chees_hmc and nuts).

#include <ember/adapt/warmup.hpp>
#include <ember/kernel/adjusted_mclmc.hpp>
#include <ember/pipeline/pipeline.hpp>

#include <cstdint>

namespace ember {

struct mams_options {
  std::int64_t warmup = 1000;          ///< warm-up transitions
  double target_acceptance = 0;        ///< the step size's target; 0: the kernel's own, 0.9
  double divergence_threshold = 1000;  ///< an energy error above this marks a divergent transition
  int max_integrator_steps = 1024;     ///< cap on the integrator steps of one transition
};

/// `mams_warmup(n)`: MAMS's warm-up as a stage, `warmup(n, approach(), step_size({.target}),
/// auto_mass(), mams_length())` (target 0: the kernel's 0.9; `mass`: the metric's adapter,
/// `diagonal_mass()` or `dense_mass()` to fix the kind). It tunes adjusted MCLMC and the
/// unadjusted `mclmc` kernel alike (kernel/mclmc.hpp): `mclmc(U) | mams_warmup(1000)`.
template <class Mass = auto_mass_adapter>
auto mams_warmup(std::int64_t n, double target_acceptance = 0, Mass mass = {}) {
  static_assert(Mass::tunes == tunable::metric,
                "ember::mams_warmup: its third argument is the metric's adapter: diagonal_mass(), dense_mass() or auto_mass()");
  return ember::warmup(n, approach(), step_size({.target = target_acceptance}), mass, mams_length());
}

struct mams_fn {
  /// `mass`: the metric's adapter, `auto_mass()` by default (diagonal or dense, chosen at each
  /// window: adapt/mass.hpp; on posteriordb 0.64× the gradients per effective draw of a diagonal
  /// metric at the median, bench/results/2026-12-01-mams-metric.md); `diagonal_mass()` or
  /// `dense_mass()` to fix the kind.
  template <class E, class Mass = auto_mass_adapter>
  auto operator()(E const& U, mams_options o = {}, Mass mass = {}) const {
    static_assert(Mass::tunes == tunable::metric,
                  "ember::mams: its third argument is the metric's adapter: diagonal_mass(), dense_mass() or auto_mass()");
    detail::checked_target(o.target_acceptance, "ember::mams: target_acceptance", "the default, 0.9");
    return adjusted_mclmc(U, {.divergence_threshold = o.divergence_threshold, .max_integrator_steps = o.max_integrator_steps}) |
           mams_warmup(o.warmup, o.target_acceptance, mass);
  }
};
inline constexpr mams_fn mams{};

}  // namespace ember
