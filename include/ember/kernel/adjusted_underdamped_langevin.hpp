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

#include <ember/core/concepts.hpp>
#include <ember/core/phase_state.hpp>
#include <ember/core/rng.hpp>
#include <ember/integrator/splitting.hpp>
#include <ember/kernel/detail/validate.hpp>
#include <ember/kernel/metropolis.hpp>
#include <ember/kernel/underdamped_langevin.hpp>

#include <cmath>
#include <stdexcept>

namespace ember {

struct adjusted_underdamped_langevin_options {
  double step_size = 0;                ///< h > 0
  double friction = 1;                 ///< γ > 0
  double mass = 1;                     ///< scalar mass m > 0
  double divergence_threshold = 1000;  ///< ΔH above this marks a divergent transition
};

/// The adjusted kernel of energy `E` with a reversible splitting `Split` = O(w) core O(w).
template <class E, class Split = obabo>
struct adjusted_underdamped_langevin_kernel {
  using energy_type = E;
  using integrator_type = Split;
  using value_type = typename E::value_type;
  static constexpr int dim = E::dim;

  E energy;
  value_type step_size;
  value_type friction;
  value_type mass;
  value_type inv_mass;
  value_type sqrt_mass;
  value_type half_inv_mass;
  value_type divergence_threshold;
  ou_coefficients<value_type, Split::noises> ou;

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
    constexpr int n = Split::size;
    detail::splitting_noise<S, dim> const noise{rng};
    Split::template apply<0, 1>(energy, s, s.p, step_size, inv_mass, ou, noise);
    phase_state<S, dim> q = s;
    Split::template apply<1, n - 1>(energy, q, q.p, step_size, inv_mass, ou, noise);
    S dh = (q.energy + kinetic_energy(q.p, half_inv_mass)) - (s.energy + kinetic_energy(s.p, half_inv_mass));
    // The rejected state is the flipped one: F∘(reject) after the involution F∘core.
    for (int i = 0; i < dim; ++i) s.p[i] = -s.p[i];
    auto info = metropolis_hastings(s, q, -dh, rng.uniform(purpose::accept), !(dh <= S(divergence_threshold)));
    Split::template apply<n - 1, n>(energy, s, s.p, step_size, inv_mass, ou, noise);
    return info;
  }

  void validate() const {
    detail::require_step_size(double(step_size), "ember::adjusted_underdamped_langevin");
    detail::require_friction_and_mass(double(friction), double(mass), "ember::adjusted_underdamped_langevin");
    detail::require_divergence_threshold(double(divergence_threshold), "ember::adjusted_underdamped_langevin");
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
    detail::require_step_size(o.step_size, "ember::adjusted_underdamped_langevin");
    detail::require_friction_and_mass(o.friction, o.mass, "ember::adjusted_underdamped_langevin");
    adjusted_underdamped_langevin_kernel<E, Split> k{U,
                                                     T(o.step_size),
                                                     T(o.friction),
                                                     T(o.mass),
                                                     T(1.0 / o.mass),
                                                     T(std::sqrt(o.mass)),
                                                     T(0.5 / o.mass),
                                                     T(o.divergence_threshold),
                                                     Split::template ou_coefficients_for<T>(o.step_size, o.friction,
                                                                                            o.mass)};
    k.validate();
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
