#pragma once
/// \file
/// `underdamped_langevin`: unadjusted underdamped (kinetic) Langevin dynamics,
///
///     dx = m⁻¹ p dt,    dp = −∇U(x) dt − γ p dt + √(2γ m) dW,
///
/// whose stationary law is π(x, p) ∝ e^{−U(x)} N(p; 0, m I). One transition is one step of size
/// h of a splitting integrator (BAOAB by default; integrator/splitting.hpp), and the momentum is
/// carried from one transition to the next in the state (`phase_state`), which is what makes
/// the dynamics underdamped: with γh small the chain moves ballistically for about 1/γ time
/// before its direction is forgotten, instead of diffusing. No accept step: the stationary law
/// is biased by O(h²) (BAOAB's position marginal is exact for Gaussian targets);
/// `adjusted_underdamped_langevin` removes the bias. One gradient per transition.
/// `underdamped_langevin(U, {.step_size = h, .friction = γ, .mass = m})` returns an
/// `underdamped_langevin_kernel`, which models `TransitionKernel`. In a run a chain starts with
/// p ~ N(0, m I) (`init(x, rng)`); `init(x)` starts it at rest.

#include <ember/core/concepts.hpp>
#include <ember/core/phase_state.hpp>
#include <ember/core/rng.hpp>
#include <ember/integrator/splitting.hpp>
#include <ember/kernel/detail/validate.hpp>

#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ember {

struct underdamped_langevin_options {
  double step_size = 0;  ///< h > 0
  double friction = 1;   ///< γ > 0, in units of 1/time
  double mass = 1;       ///< scalar mass m > 0
};

namespace detail {
inline void require_friction_and_mass(double gamma, double mass, char const* who) {
  if (!(gamma > 0) || !std::isfinite(gamma))
    throw std::invalid_argument(std::string(who) + ": the friction must be positive and finite, got " +
                                std::to_string(gamma));
  if (!(mass > 0) || !std::isfinite(mass))
    throw std::invalid_argument(std::string(who) + ": the mass must be positive and finite, got " +
                                std::to_string(mass));
}

// The noise of the j-th O operator of a transition: purpose user + j, so the O's of one
// transition draw independent normals.
template <class S, int D>
struct splitting_noise {
  chain_rng<S> const& rng;
  template <int J>
  EMBER_HD EMBER_INLINE vec<S, D> operator()(std::integral_constant<int, J>) const {
    return rng.template normal<D>(purpose(std::uint32_t(purpose::user) + std::uint32_t(J)));
  }
};
}  // namespace detail

/// The unadjusted underdamped Langevin kernel of energy `E` with splitting `Split`.
/// Holds h, γ, m, m⁻¹ and the `O` constants e^{−γwh}, √(m(1 − e^{−2γwh})) computed once.
template <class E, class Split = baoab>
struct underdamped_langevin_kernel {
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

  /// One step of the splitting. Divergent where the new energy is not finite.
  template <class S>
  EMBER_HD step_info<S> step(phase_state<S, dim>& s, chain_rng<S> const& rng) const {
    Split::step(energy, s, s.p, step_size, inv_mass, ou, detail::splitting_noise<S, dim>{rng});
    return {S(1), !is_finite(s.energy), S(1)};
  }

  void validate() const {
    detail::require_step_size(double(step_size), "ember::underdamped_langevin");
    detail::require_friction_and_mass(double(friction), double(mass), "ember::underdamped_langevin");
  }
};

template <class Split = baoab>
struct underdamped_langevin_fn {
  static_assert(Split::noises > 0,
                "ember::underdamped_langevin needs a splitting with an O (friction) operator, such as "
                "splitting<B, A, O, A, B>; without one it is Hamiltonian dynamics (use hmc_with)");
  // O number j draws with purpose user + j; user + 15 is the initial momentum's.
  static_assert(Split::noises < 15, "ember::underdamped_langevin: at most 14 O operators per step");
  template <class E>
  auto operator()(E const& U, underdamped_langevin_options o) const {
    static_assert(DifferentiableEnergy<E>,
                  "ember::underdamped_langevin needs a differentiable energy: a type with dim, value_type, "
                  "value(x) and value_and_grad(x, g); wrap a plain callable in custom_energy<D>(f)");
    using T = typename E::value_type;
    // Checked before the O constants are computed from them (a NaN mass would only show later).
    detail::require_step_size(o.step_size, "ember::underdamped_langevin");
    detail::require_friction_and_mass(o.friction, o.mass, "ember::underdamped_langevin");
    underdamped_langevin_kernel<E, Split> k{U,
                                            T(o.step_size),
                                            T(o.friction),
                                            T(o.mass),
                                            T(1.0 / o.mass),
                                            T(std::sqrt(o.mass)),
                                            Split::template ou_coefficients_for<T>(o.step_size, o.friction, o.mass)};
    k.validate();
    return k;
  }
};
/// `underdamped_langevin(U, {.step_size = h, .friction = γ, .mass = m})` with BAOAB;
/// `underdamped_langevin_with<obabo>(U, {...})` or any `splitting<...>` with an `O` picks another.
inline constexpr underdamped_langevin_fn<> underdamped_langevin{};
template <class Split>
inline constexpr underdamped_langevin_fn<Split> underdamped_langevin_with{};

}  // namespace ember
