#pragma once
/// \file
/// `adjusted_underdamped_langevin`: Metropolis-adjusted underdamped Langevin, i.e. generalised
/// HMC with partial momentum refreshment (Horowitz 1991). A transition with the splitting
/// O(½) · core · O(½) (OBABO by default, the core velocity Verlet) is
///  1. p ← e^{−γh/2} p + √(m(1 − e^{−γh})) ξ₁                       (exact, keeps N(0, m) invariant);
///  2. (x', p') = core(x, p); accept with probability min(1, e^{−ΔH}),
///     ΔH = U(x') + |p'|²/2m − U(x) − |p|²/2m; on rejection keep x and FLIP the momentum, p ← −p;
///  3. p ← e^{−γh/2} p + √(m(1 − e^{−γh})) ξ₂.
/// Step 2 is a Metropolis–Hastings step on π(x, p) ∝ e^{−U(x)} N(p; 0, m) with the involutive
/// proposal F∘core (F the flip: the core is reversible and volume-preserving) followed by F, so
/// each step keeps π invariant and the position marginal is exactly e^{−U}: no step-size bias.
/// The flip on rejection is what keeps the momentum's direction on acceptance (high γ: MALA;
/// small γ: long, persistent trajectories made of one-step pieces).
/// `adjusted_underdamped_langevin(U, {.step_size = h, .friction = γ, .mass = m})` returns an
/// `adjusted_underdamped_langevin_kernel`, which models `TransitionKernel`. One gradient per
/// transition. In a run a chain starts with p ~ N(0, m I) (`init(x, rng)`), so a chain started
/// at x ~ π is stationary from the first transition.
///
/// Warm-up (`adjusted_underdamped_langevin(U) | warmup(n)`): step size towards an acceptance of
/// 0.9 (`target_acceptance`: higher than HMC's, because every rejection reverses the momentum and
/// so undoes the persistence the kernel is for) and a diagonal metric, with which the momentum
/// is carried whitened (integrator/splitting.hpp) and γ is in the whitened time.

#include <ember/core/concepts.hpp>
#include <ember/core/phase_state.hpp>
#include <ember/core/rng.hpp>
#include <ember/integrator/splitting.hpp>
#include <ember/kernel/detail/validate.hpp>
#include <ember/kernel/metropolis.hpp>
#include <ember/kernel/underdamped_langevin.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace ember {

struct adjusted_underdamped_langevin_options {
  double step_size = 0;                ///< h > 0; 0: adapted by a warm-up (required without one)
  double friction = 1;                 ///< γ > 0
  double mass = 1;                     ///< scalar mass m > 0
  double divergence_threshold = 1000;  ///< ΔH above this marks a divergent transition
};

/// The adjusted kernel of energy `E` with a reversible splitting `Split` = O(w) core O(w) and
/// metric `Metric` (a scalar mass, or a diagonal metric adapted by a warm-up).
template <class E, class Split = obabo, class Metric = scalar_metric<typename E::value_type>>
struct adjusted_underdamped_langevin_kernel {
  using energy_type = E;
  using integrator_type = Split;
  using value_type = typename E::value_type;
  static constexpr int dim = E::dim;
  /// What a warm-up's step_size() aims at (see the file comment).
  static constexpr double target_acceptance = 0.9;
  /// Its metric is diagonal or its options' scalar mass (whitened momentum): `auto_mass()` adapts
  /// it as `diagonal_mass()` does.
  static constexpr bool diagonal_metric_only = true;

  E energy;
  value_type step_size;
  value_type friction;
  value_type mass;
  value_type inv_mass;
  value_type sqrt_mass;
  value_type half_inv_mass;
  value_type divergence_threshold;
  ou_coefficients<value_type, Split::noises> ou;
  Metric metric;  ///< scalar_metric{1/√m}, or the adapted diagonal metric the splitting uses

  /// The state at x at rest: (x, U(x), ∇U(x), p = 0).
  template <class S>
  EMBER_HD phase_state<S, dim> init(vec<S, dim> const& x) const {
    return make_phase_state(energy, x, filled<S, dim>(0));
  }
  /// The state at x with p ~ N(0, m I) (what a run uses; see `draw_phase_state`).
  template <class S>
  EMBER_HD phase_state<S, dim> init(vec<S, dim> const& x, chain_rng<S> const& rng) const {
    return draw_phase_state(energy, x, sqrt_mass, rng);
  }

  template <class S>
  EMBER_HD step_info<S> step(phase_state<S, dim>& s, chain_rng<S> const& rng) const {
    return detail::adjusted_transition<Split>(energy, s, rng, step_size, detail::splitting_mass(*this), half_inv_mass, ou,
                                              divergence_threshold);
  }

  /// A copy with another step size (the `O` constants recomputed).
  adjusted_underdamped_langevin_kernel with_step_size(double h) const { return detail::with_phase_step_size(*this, h); }
  /// A copy with a diagonal metric (a warm-up's diagonal_mass()): whitened momentum, unit mass.
  template <class M>
  auto with_metric(M const& m) const {
    static_assert(std::is_same_v<M, diagonal_metric<value_type, dim>> || std::is_same_v<M, Metric>,
                  "ember::adjusted_underdamped_langevin adapts a diagonal metric only: use warmup(n) or "
                  "warmup(n, step_size(), diagonal_mass()), not dense_mass()");
    if constexpr (std::is_same_v<M, Metric> && !std::is_same_v<M, diagonal_metric<value_type, dim>>) {
      return *this;  // the scalar mass of the options (a checkpoint's metric is that one)
    } else {
      return adjusted_underdamped_langevin_kernel<E, Split, M>{
          energy,
          step_size,
          friction,
          value_type(1),
          value_type(1),
          value_type(1),
          value_type(0.5),
          divergence_threshold,
          Split::template ou_coefficients_for<value_type>(double(step_size), double(friction), 1.0),
          m};
    }
  }

  void validate() const {
    detail::require_step_size(double(step_size), "ember::adjusted_underdamped_langevin");
    detail::require_friction_and_mass(double(friction), double(mass), "ember::adjusted_underdamped_langevin");
    detail::require_divergence_threshold(double(divergence_threshold), "ember::adjusted_underdamped_langevin");
    metric.validate("ember::adjusted_underdamped_langevin");
  }
};

template <class Split = obabo>
struct adjusted_underdamped_langevin_fn {
  static_assert(Split::adjustable,
                "ember::adjusted_underdamped_langevin needs a splitting O(w) core O(w): a palindrome whose only O "
                "operators are its two ends, such as splitting<O, B, A, B, O>, so that the core is reversible");
  template <class E>
  auto operator()(E const& U, adjusted_underdamped_langevin_options o) const {
    static_assert(DifferentiableEnergy<E>,
                  "ember::adjusted_underdamped_langevin needs a differentiable energy: a type with dim, "
                  "value_type, value(x) and value_and_grad(x, g); wrap a plain callable in custom_energy<D>(f)");
    using T = typename E::value_type;
    // A step size of 0 is "to be adapted": a run refuses it unless a warm-up sets one.
    if (o.step_size != 0) detail::require_step_size(o.step_size, "ember::adjusted_underdamped_langevin");
    detail::require_friction_and_mass(o.friction, o.mass, "ember::adjusted_underdamped_langevin");
    double const h = o.step_size != 0 ? o.step_size : std::numeric_limits<double>::quiet_NaN();
    adjusted_underdamped_langevin_kernel<E, Split> k{U,
                                                     T(h),
                                                     T(o.friction),
                                                     T(o.mass),
                                                     T(1.0 / o.mass),
                                                     T(std::sqrt(o.mass)),
                                                     T(0.5 / o.mass),
                                                     T(o.divergence_threshold),
                                                     Split::template ou_coefficients_for<T>(h, o.friction, o.mass),
                                                     scalar_metric<T>{T(1.0 / std::sqrt(o.mass))}};
    if (o.step_size != 0) k.validate();
    return k;
  }
};
/// `adjusted_underdamped_langevin(U, {.step_size = h, .friction = γ, .mass = m})` with OBABO;
/// `adjusted_underdamped_langevin_with<splitting<O, B(b), A(1, 2), B(1 − 2b), A(1, 2), B(b), O>>`
/// puts McLachlan's splitting between the O's.
inline constexpr adjusted_underdamped_langevin_fn<> adjusted_underdamped_langevin{};
template <class Split>
inline constexpr adjusted_underdamped_langevin_fn<Split> adjusted_underdamped_langevin_with{};

}  // namespace ember
