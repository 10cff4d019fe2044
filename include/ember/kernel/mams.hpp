#pragma once
/// \file
/// `mams(U, {.warmup = 1000})`: Metropolis-adjusted microcanonical HMC with its warm-up, nothing
/// left to choose but the warm-up's length. It is `adjusted_mclmc(U, {...}) | warmup(n,
/// approach(), step_size(), diagonal_mass(), mams_length())`: HMC trajectories until the first
/// metric window closes, so chains started far away arrive (adapt/approach.hpp), the step size by
/// dual averaging towards the kernel's acceptance 0.9 (the MAMS paper's), a diagonal metric in
/// Stan's windows, the mean trajectory length L from the chains' spread and decorrelation
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
/// diagonal_mass(), mams_length())` (target 0: the kernel's 0.9). It tunes adjusted MCLMC and the
/// unadjusted `mclmc` kernel alike (kernel/mclmc.hpp): `mclmc(U) | mams_warmup(1000)`.
inline auto mams_warmup(std::int64_t n, double target_acceptance = 0) {
  return ember::warmup(n, approach(), step_size({.target = target_acceptance}), diagonal_mass(), mams_length());
}

struct mams_fn {
  template <class E>
  auto operator()(E const& U, mams_options o = {}) const {
    detail::checked_target(o.target_acceptance, "ember::mams: target_acceptance", "the default, 0.9");
    return adjusted_mclmc(U, {.divergence_threshold = o.divergence_threshold, .max_integrator_steps = o.max_integrator_steps}) |
           mams_warmup(o.warmup, o.target_acceptance);
  }
};
inline constexpr mams_fn mams{};

}  // namespace ember
