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
///
/// Warm-up (`underdamped_langevin(U) | warmup(n)`): the step size and a diagonal metric are
/// adapted as for the adjusted kernel, by running it: in warm-up each transition is one of
/// `adjusted_underdamped_langevin` (OBABO with an accept step, kernel/adjusted_underdamped_langevin.hpp)
/// with this kernel's step size, friction and metric, tuned to accept 90 % (`target_acceptance`).
/// An unadjusted kernel has no acceptance of its own to aim at, and without an accept step the
/// first, untuned step sizes would fling far starts away for good; the step size at which the
/// adjusted scheme accepts 90 % keeps each step's energy error, so the bias, small (warm-up draws
/// are discarded; the kept ones are this kernel's). Once a diagonal metric is adapted the
/// momentum is carried whitened (integrator/splitting.hpp) and γ is in the whitened time, where
/// the target's scales are about 1.

#include <ember/core/concepts.hpp>
#include <ember/core/phase_state.hpp>
#include <ember/core/rng.hpp>
#include <ember/integrator/splitting.hpp>
#include <ember/kernel/detail/validate.hpp>
#include <ember/kernel/metropolis.hpp>
#include <ember/core/metric.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ember {

struct underdamped_langevin_options {
  double step_size = 0;  ///< h > 0; 0: adapted by a warm-up (required without one)
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

// What a phase-space kernel passes to its splitting as the mass: m⁻¹ for a scalar mass, the
// metric itself for a diagonal one (whitened momentum).
template <class K>
EMBER_HD EMBER_INLINE auto const& splitting_mass(K const& k) {
  if constexpr (std::is_same_v<std::remove_cvref_t<decltype(k.metric)>, scalar_metric<typename K::value_type>>)
    return k.inv_mass;
  else
    return k.metric;
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

// A phase-space kernel K (both underdamped Langevin kernels) with step size h: its `O` constants
// recomputed for h, its friction and mass; unchanged where h is its own step size, so that a
// resumed run stays bitwise.
template <class K>
K with_phase_step_size(K k, double h) {
  using T = typename K::value_type;
  if (T(h) == k.step_size) return k;
  k.step_size = T(h);
  k.ou = K::integrator_type::template ou_coefficients_for<T>(h, double(k.friction), double(k.mass));
  return k;
}

// One transition of the Metropolis-adjusted kernel of splitting O(w) core O(w) (generalised HMC,
// kernel/adjusted_underdamped_langevin.hpp says why it is exact): the adjusted kernel's step, and
// the unadjusted kernel's in warm-up.
template <class Split, class E, class S, int D, class Mass>
EMBER_HD EMBER_INLINE step_info<S> adjusted_transition(E const& U, phase_state<S, D>& s, chain_rng<S> const& rng,
                                                       element_t<S> h, Mass const& mass, element_t<S> half_inv_mass,
                                                       ou_coefficients<element_t<S>, 2> const& ou,
                                                       element_t<S> divergence_threshold) {
  constexpr int n = Split::size;
  splitting_noise<S, D> const noise{rng};
  Split::template apply<0, 1>(U, s, s.p, h, mass, ou, noise);
  phase_state<S, D> q = s;
  Split::template apply<1, n - 1>(U, q, q.p, h, mass, ou, noise);
  S dh = (q.energy + kinetic_energy(q.p, half_inv_mass)) - (s.energy + kinetic_energy(s.p, half_inv_mass));
  // The rejected state is the flipped one: F∘(reject) after the involution F∘core.
  for (int i = 0; i < D; ++i) s.p[i] = -s.p[i];
  auto info = metropolis_hastings(s, q, -dh, rng.uniform(purpose::accept), !(dh <= S(divergence_threshold)));
  Split::template apply<n - 1, n>(U, s, s.p, h, mass, ou, noise);
  info.gradients = S(element_t<S>(Split::gradients_per_step));
  return info;
}
}  // namespace detail

/// The unadjusted underdamped Langevin kernel of energy `E` with splitting `Split` and metric
/// `Metric`: a scalar mass m (`scalar_metric`, L = 1/√m, what the options give) or, adapted by a
/// warm-up, a `diagonal_metric` (whitened momentum). Holds h, γ, m, m⁻¹, √m (1 with a diagonal
/// metric) and the `O` constants e^{−γwh}, √(m(1 − e^{−2γwh})) computed once.
template <class E, class Split = baoab, class Metric = scalar_metric<typename E::value_type>>
struct underdamped_langevin_kernel {
  using energy_type = E;
  using integrator_type = Split;
  using value_type = typename E::value_type;
  static constexpr int dim = E::dim;
  /// What a warm-up's step_size() aims at: the acceptance of its warm-up form (file comment).
  static constexpr double target_acceptance = 0.9;
  /// Its metric is diagonal or its options' scalar mass (whitened momentum): `auto_mass()` adapts
  /// it as `diagonal_mass()` does.
  static constexpr bool diagonal_metric_only = true;
  /// No accept step: every transition is kept (a result reports no target acceptance).
  static constexpr bool unadjusted = true;

  E energy;
  value_type step_size;
  value_type friction;
  value_type mass;
  value_type inv_mass;
  value_type sqrt_mass;
  ou_coefficients<value_type, Split::noises> ou;
  Metric metric;  ///< scalar_metric{1/√m}, or the adapted diagonal metric the splitting uses
  bool guarded = false;  ///< warm-up only: transitions are adjusted OBABO ones (file comment)
  ou_coefficients<value_type, 2> warmup_ou{};  ///< OBABO's `O` constants, when guarded

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

  /// One step of the splitting. Divergent where the new energy is not finite. In its warm-up
  /// form (`guarded`) a transition is instead one of the Metropolis-adjusted OBABO kernel with the
  /// same step size, friction and metric (file comment).
  template <class S>
  EMBER_HD step_info<S> step(phase_state<S, dim>& s, chain_rng<S> const& rng) const {
    if (guarded)
      return detail::adjusted_transition<obabo>(energy, s, rng, step_size, detail::splitting_mass(*this),
                                                value_type(0.5) * inv_mass, warmup_ou, value_type(1000));
    Split::step(energy, s, s.p, step_size, detail::splitting_mass(*this), ou, detail::splitting_noise<S, dim>{rng});
    return {S(1), !is_finite(s.energy), S(1), S(element_t<S>(Split::gradients_per_step))};
  }
  /// This kernel in its warm-up form (`guarded`), as a warm-up's `kernel_at` asks for it.
  underdamped_langevin_kernel in_warmup() const {
    underdamped_langevin_kernel k = *this;
    k.guarded = true;
    k.warmup_ou = obabo::ou_coefficients_for<value_type>(double(step_size), double(friction), double(mass));
    return k;
  }

  /// A copy with another step size (the `O` constants recomputed).
  underdamped_langevin_kernel with_step_size(double h) const { return detail::with_phase_step_size(*this, h); }
  /// A copy with a diagonal metric (a warm-up's diagonal_mass()): whitened momentum, unit mass.
  template <class M>
  auto with_metric(M const& m) const {
    static_assert(std::is_same_v<M, diagonal_metric<value_type, dim>> || std::is_same_v<M, Metric>,
                  "ember::underdamped_langevin adapts a diagonal metric only: use warmup(n) or "
                  "warmup(n, step_size(), diagonal_mass()), not dense_mass()");
    if constexpr (std::is_same_v<M, Metric> && !std::is_same_v<M, diagonal_metric<value_type, dim>>) {
      return *this;  // the scalar mass of the options (a checkpoint's metric is that one)
    } else {
      return underdamped_langevin_kernel<E, Split, M>{
          energy, step_size, friction, value_type(1), value_type(1), value_type(1),
          Split::template ou_coefficients_for<value_type>(double(step_size), double(friction), 1.0), m};
    }
  }

  void validate() const {
    detail::require_step_size(double(step_size), "ember::underdamped_langevin");
    detail::require_friction_and_mass(double(friction), double(mass), "ember::underdamped_langevin");
    metric.validate("ember::underdamped_langevin");
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
    // A step size of 0 is "to be adapted": a run refuses it unless a warm-up sets one.
    if (o.step_size != 0) detail::require_step_size(o.step_size, "ember::underdamped_langevin");
    detail::require_friction_and_mass(o.friction, o.mass, "ember::underdamped_langevin");
    double const h = o.step_size != 0 ? o.step_size : std::numeric_limits<double>::quiet_NaN();
    underdamped_langevin_kernel<E, Split> k{U,
                                            T(h),
                                            T(o.friction),
                                            T(o.mass),
                                            T(1.0 / o.mass),
                                            T(std::sqrt(o.mass)),
                                            Split::template ou_coefficients_for<T>(h, o.friction, o.mass),
                                            scalar_metric<T>{T(1.0 / std::sqrt(o.mass))}};
    if (o.step_size != 0) k.validate();
    return k;
  }
};
/// `underdamped_langevin(U, {.step_size = h, .friction = γ, .mass = m})` with BAOAB;
/// `underdamped_langevin_with<obabo>(U, {...})` or any `splitting<...>` with an `O` picks another.
inline constexpr underdamped_langevin_fn<> underdamped_langevin{};
template <class Split>
inline constexpr underdamped_langevin_fn<Split> underdamped_langevin_with{};

}  // namespace ember
