#pragma once
/// \file
/// `chees_hmc(U, {.warmup = 1000})`: the sampler to start with for a Bayesian posterior. HMC whose
/// step size (dual averaging towards a harmonic-mean acceptance of 0.8 over chains), metric
/// (Stan's windows, the draws and gradients of all chains pooled; diagonal, or dense where the
/// coordinates correlate enough to pay: `auto_mass()`) and trajectory length (ChEES, Hoffman,
/// Radul & Sountsov 2021; kept within [ε, 1000ε]) are adapted over `warmup` transitions. It is
/// `hmc(U, {...}) | warmup(n, step_size(), auto_mass(), chees())` with nothing left to choose
/// but the warm-up's length (`chees_hmc(U, {...}, diagonal_mass())` fixes the metric's kind); it
/// returns that pipeline, so stages follow with `|`:
/// `sample(chees_hmc(U) | record(), {.chains = 64, .steps = 1000})`. ChEES adapts from the
/// ensemble: it needs at least 2 chains (docs/tuning.md says how many pay).

#include <ember/kernel/hmc.hpp>
#include <ember/pipeline/pipeline.hpp>
#include <ember/adapt/warmup.hpp>

#include <cstdint>

namespace ember {

struct chees_hmc_options {
  std::int64_t warmup = 1000;          ///< warm-up transitions (Stan's and NumPyro's default)
  /// The harmonic mean of acceptance over chains the step size aims at; 0: 0.8 (Stan's and
  /// NumPyro's target; ChEES's paper and BlackJAX use 0.651, and 0.8 costs 13 % of the ESS per
  /// gradient at the median of posteriordb's posteriors). Raise it (0.9, 0.95) where the summary
  /// reports divergent transitions: a smaller step.
  double target_acceptance = 0;
  double divergence_threshold = 1000;  ///< ΔH above this marks a divergent transition
  int max_integrator_steps = 1024;     ///< cap on the leapfrog steps of one transition
};

struct chees_hmc_fn {
  /// `mass`: the metric's adapter, `auto_mass()` by default (diagonal or dense, chosen at each
  /// window: adapt/mass.hpp); `diagonal_mass()` or `dense_mass()` to fix the kind.
  template <class E, class Mass = auto_mass_adapter>
  auto operator()(E const& U, chees_hmc_options o = {}, Mass mass = {}) const {
    static_assert(Mass::tunes == tunable::metric,
                  "ember::chees_hmc: its third argument is the metric's adapter: diagonal_mass(), dense_mass() or auto_mass()");
    detail::checked_target(o.target_acceptance, "ember::chees_hmc: target_acceptance", "the default, 0.8");
    return hmc(U, {.divergence_threshold = o.divergence_threshold, .max_integrator_steps = o.max_integrator_steps}) |
           ember::warmup(o.warmup, step_size({.target = o.target_acceptance}), mass, chees());
  }
};
inline constexpr chees_hmc_fn chees_hmc{};

}  // namespace ember
