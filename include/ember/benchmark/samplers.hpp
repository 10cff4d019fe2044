#pragma once
/// \file
/// Sampler factories for a benchmark matrix: callables `f(U, w)` that build, from an energy U and
/// a warm-up length w, the pipeline a configuration runs (without `record()`, which the matrix
/// adds). Each has a `name` (the JSON "sampler"), `needs_gradient` (a matrix skips it, with the
/// reason, on an energy that has no `value_and_grad`) and `target_acceptance` (what step-size
/// adaptation aims at; NaN where nothing is adapted, so the acceptance gate is off).
///
/// `gradients_of_transition(k, t)` is how a matrix counts gradient evaluations exactly: ULA and
/// MALA take one per transition; HMC takes its integrator's `gradients_per_step` times the
/// steps of transition t, which `hmc_kernel::integrator_steps_at(t, ε)` gives (L, or ⌈uₜT/ε⌉ with a
/// trajectory length: the same for every chain, a function of t and the adapted T and ε), and
/// adjusted MCLMC's `gradients_at(t)` (its steps of transition t times its integrator's, or in its
/// approach form, adapt/approach.hpp, at most 16 velocity Verlet steps of one gradient).

#include <ember/kernel/adjusted_mclmc.hpp>
#include <ember/kernel/chees_hmc.hpp>
#include <ember/kernel/hmc.hpp>
#include <ember/kernel/mala.hpp>
#include <ember/kernel/mams.hpp>
#include <ember/kernel/mclmc.hpp>
#include <ember/kernel/nuts.hpp>
#include <ember/kernel/ula.hpp>
#include <ember/pipeline/pipeline.hpp>
#include <ember/pipeline/stages.hpp>

#include <cstdint>
#include <limits>

namespace ember::benchmark {

/// Whether a kernel's gradients per transition are known only after the transition (NUTS: a
/// tree's size); the matrix then takes them from the run's own count (`result::gradients()`).
template <class K>
inline constexpr bool counts_gradients_as_it_goes = requires { K::accepted_means_moved; };

/// Gradient evaluations of one chain at transition t under kernel k.
template <class K>
double gradients_of_transition(K const& k, std::int64_t t) {
  if constexpr (requires { k.gradients_at(std::uint32_t(t)); }) {
    return double(k.gradients_at(std::uint32_t(t)));
  } else if constexpr (requires(typename K::value_type & eps) { k.integrator_steps_at(std::uint32_t(t), eps); }) {
    typename K::value_type eps = typename K::value_type(k.step_size);
    return double(K::integrator_type::gradients_per_step) * k.integrator_steps_at(std::uint32_t(t), eps);
  } else {
    // Only one-gradient-per-transition kernels may get here: a kernel with an integrator of its
    // own must say how many steps transition t takes, or the counts would be silently wrong.
    static_assert(!requires { typename K::integrator_type; },
                  "ember::benchmark: this kernel has an integrator but no integrator_steps_at(t, eps): "
                  "the matrix cannot count its gradient evaluations");
    return 1;
  }
}

/// MALA with warm-up of its step size and a diagonal metric, target acceptance 0.574. The
/// matrix's samplers fix the metric's kind (diagonal, as the peers' defaults), where ember's own
/// defaults choose it (`auto_mass()`).
struct adapted_mala {
  char const* name = "mala";
  static constexpr bool needs_gradient = true;
  double target_acceptance = 0.574;
  template <class E>
  auto operator()(E const& U, std::int64_t w) const {
    return mala(U, {}) | warmup(w, step_size(), diagonal_mass());
  }
};

/// HMC with L leapfrog steps and its step size jittered over ε(1 ± j), step size and diagonal
/// metric adapted, target acceptance 0.8.
struct adapted_hmc {
  char const* name = "hmc";
  int integrator_steps = 16;
  double jitter = 0.2;
  static constexpr bool needs_gradient = true;
  double target_acceptance = 0.8;
  template <class E>
  auto operator()(E const& U, std::int64_t w) const {
    return hmc(U, {.integrator_steps = integrator_steps, .jitter = jitter}) | warmup(w, step_size(), diagonal_mass());
  }
};

/// NUTS (multinomial, generalised U-turn; kernel/nuts.hpp) with Stan's warm-up of its step size
/// (towards a mean tree acceptance of 0.8) and diagonal metric. No acceptance gate:
/// its acceptance rate counts transitions that moved, not the statistic it was tuned on.
struct adapted_nuts {
  char const* name = "nuts";
  int max_tree_depth = 10;
  static constexpr bool needs_gradient = true;
  double target_acceptance = std::numeric_limits<double>::quiet_NaN();
  template <class E>
  auto operator()(E const& U, std::int64_t w) const {
    return nuts(U, {.max_tree_depth = max_tree_depth}) | warmup(w, step_size(), diagonal_mass());
  }
};

/// NUTS as `adapted_nuts`, with a dense metric (from the draws' and gradients' covariances in
/// Stan's windows, `dense_mass()`; D ≤ 64) in place of the diagonal one: the same warm-up budget,
/// a full preconditioner for posteriors whose coordinates are correlated.
struct adapted_nuts_dense {
  char const* name = "nuts_dense";
  int max_tree_depth = 10;
  static constexpr bool needs_gradient = true;
  double target_acceptance = std::numeric_limits<double>::quiet_NaN();
  template <class E>
  auto operator()(E const& U, std::int64_t w) const {
    return nuts(U, {.max_tree_depth = max_tree_depth}) | warmup(w, step_size(), dense_mass());
  }
};

/// ChEES-HMC (Hoffman, Radul & Sountsov 2021): step size, diagonal metric (as BlackJAX's) and
/// trajectory length adapted, target acceptance 0.651 (as BlackJAX's; chees_hmc's own default is 0.8).
struct chees_hmc {
  char const* name = "chees_hmc";
  static constexpr bool needs_gradient = true;
  double target_acceptance = 0.651;
  template <class E>
  auto operator()(E const& U, std::int64_t w) const {
    return ember::chees_hmc(U, {.warmup = w, .target_acceptance = target_acceptance}, diagonal_mass());
  }
};

/// MAMS, Metropolis-adjusted microcanonical HMC (kernel/mams.hpp): step size towards acceptance
/// 0.9, diagonal metric (as BlackJAX's; mams(U)'s own default is auto_mass()) and mean trajectory
/// length adapted.
struct mams {
  char const* name = "mams";
  static constexpr bool needs_gradient = true;
  double target_acceptance = 0.9;
  template <class E>
  auto operator()(E const& U, std::int64_t w) const {
    return ember::mams(U, {.warmup = w}, diagonal_mass());
  }
};

/// Unadjusted MCLMC (kernel/mclmc.hpp) with MAMS's warm-up and a diagonal metric: biased,
/// benchmarked beside MAMS for what the accept step costs. No acceptance gate (it has no accept step).
struct mclmc {
  char const* name = "mclmc";
  static constexpr bool needs_gradient = true;
  double target_acceptance = std::numeric_limits<double>::quiet_NaN();
  template <class E>
  auto operator()(E const& U, std::int64_t w) const {
    return ember::mclmc(U) | mams_warmup(w, 0, diagonal_mass());
  }
};

/// The unadjusted Langevin algorithm with a fixed step size; its warm-up is a burn-in (nothing to
/// adapt), and it has no acceptance test. Its bias at that step size is what it is benchmarked for.
struct ula_sampler {
  char const* name = "ula";
  double step_size = 0.1;
  static constexpr bool needs_gradient = true;
  double target_acceptance = std::numeric_limits<double>::quiet_NaN();
  template <class E>
  auto operator()(E const& U, std::int64_t w) const {
    return ula(U, {.step_size = step_size}) | burn_in(w);
  }
};

}  // namespace ember::benchmark
