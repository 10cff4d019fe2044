#pragma once
/// \file
/// `hmc`: Hamiltonian Monte Carlo with a scalar mass m. Draws p ~ N(0, mI), runs L steps of a
/// palindromic integrator (velocity Verlet by default) on H = U(x) + |p|²/2m, and accepts with
/// probability min(1, e^{−ΔH}). The gradient at the current state is cached, so a transition
/// costs L gradient evaluations with velocity Verlet (L + 1 with the first one counted, which is
/// reused from the previous transition). A transition whose ΔH exceeds the divergence threshold
/// (or is NaN) is reported as divergent, as in Stan and BlackJAX.
/// `hmc(U, {.step_size = ε, .steps = L})` returns an `hmc_kernel`, which models `TransitionKernel`.

#include <ember/core/chain_state.hpp>
#include <ember/core/concepts.hpp>
#include <ember/core/rng.hpp>
#include <ember/integrator/palindromic.hpp>
#include <ember/kernel/detail/validate.hpp>
#include <ember/kernel/metropolis.hpp>

#include <cmath>
#include <stdexcept>
#include <string>

namespace ember {

struct hmc_options {
  double step_size = 0;                  ///< ε > 0
  int steps = 1;                         ///< L ≥ 1 integrator steps per transition
  double mass = 1;                       ///< scalar mass m > 0
  double divergence_threshold = 1000;    ///< ΔH above this marks a divergent transition
};

template <class E, class Integrator = velocity_verlet>
struct hmc_kernel {
  using energy_type = E;
  using integrator_type = Integrator;
  using value_type = typename E::value_type;
  static constexpr int dim = E::dim;

  E energy;
  value_type step_size;
  int steps;
  value_type sqrt_mass;
  value_type inv_mass;
  value_type divergence_threshold;

  template <class S>
  EMBER_HD chain_state<S, dim> init(vec<S, dim> const& x) const {
    return make_state(energy, x);
  }

  template <class S>
  EMBER_HD step_info<S> step(chain_state<S, dim>& s, chain_rng<S> const& rng) const {
    using T = value_type;
    auto xi = rng.template normal<dim>(purpose::proposal);
    vec<S, dim> p;
    S k0 = S(0);
    for (int i = 0; i < dim; ++i) {
      p[i] = S(sqrt_mass) * xi[i];
      k0 = k0 + xi[i] * xi[i];  // |p|²/2m = |ξ|²/2
    }
    chain_state<S, dim> q = s;
    Integrator::steps(energy, q, p, step_size, inv_mass, steps);
    S k1 = S(0);
    for (int i = 0; i < dim; ++i) k1 = k1 + p[i] * p[i];
    S dh = (q.energy + S(T(0.5) * inv_mass) * k1) - (s.energy + S(T(0.5)) * k0);
    return metropolis_hastings(s, q, -dh, rng.uniform(purpose::accept), !(dh <= S(divergence_threshold)));
  }

  void validate() const {
    detail::require_step_size(double(step_size), "ember::hmc");
    if (steps < 1)
      throw std::invalid_argument("ember::hmc: the number of integrator steps must be at least 1, got " +
                                  std::to_string(steps));
    if (!(inv_mass > 0) || !std::isfinite(double(inv_mass)) || !std::isfinite(double(sqrt_mass)))
      throw std::invalid_argument("ember::hmc: the mass must be positive and finite");
    if (!(divergence_threshold > 0))
      throw std::invalid_argument("ember::hmc: the divergence threshold must be positive (infinity disables it)");
  }
};

template <class Integrator = velocity_verlet>
struct hmc_fn {
  template <class E>
  auto operator()(E const& U, hmc_options o) const {
    static_assert(DifferentiableEnergy<E>,
                  "ember::hmc needs a differentiable energy: a type with dim, value_type, "
                  "value(x) and value_and_grad(x, g); wrap a plain callable in custom_energy<D>(f)");
    using T = typename E::value_type;
    hmc_kernel<E, Integrator> k{U,
                                T(o.step_size),
                                o.steps,
                                T(std::sqrt(o.mass)),
                                T(1.0 / o.mass),
                                T(o.divergence_threshold)};
    k.validate();
    return k;
  }
};
/// `hmc(U, {.step_size = ε, .steps = L})` with velocity Verlet; `hmc_with<mclachlan>(U, {...})`
/// picks another palindromic integrator.
inline constexpr hmc_fn<> hmc{};
template <class Integrator>
inline constexpr hmc_fn<Integrator> hmc_with{};

}  // namespace ember
