#pragma once
/// \file
/// `mala`: the Metropolis-adjusted Langevin algorithm. Proposes x' = x − η∇U(x) + √(2η) ξ and
/// accepts with probability min(1, e^{U(x) − U(x')} q(x | x') / q(x' | x)), where
/// q(y | x) ∝ exp(−|y − x + η∇U(x)|² / 4η) is the (asymmetric) Langevin proposal density.
/// One gradient per transition: the proposal's gradient is kept if it is accepted.
/// `mala(U, {.step_size = η})` returns a `mala_kernel`, which models `TransitionKernel`.

#include <ember/core/chain_state.hpp>
#include <ember/core/concepts.hpp>
#include <ember/core/rng.hpp>
#include <ember/integrator/euler_maruyama.hpp>
#include <ember/kernel/detail/validate.hpp>
#include <ember/kernel/metropolis.hpp>

#include <cmath>

namespace ember {

struct mala_options {
  double step_size = 0;  ///< η > 0
};

template <class E>
struct mala_kernel {
  using energy_type = E;
  using value_type = typename E::value_type;
  static constexpr int dim = E::dim;

  E energy;
  value_type step_size;
  value_type noise_scale;    // √(2η)
  value_type inv_4eta;       // 1/(4η)

  template <class S>
  EMBER_HD chain_state<S, dim> init(vec<S, dim> const& x) const {
    return make_state(energy, x);
  }

  template <class S>
  EMBER_HD step_info<S> step(chain_state<S, dim>& s, chain_rng<S> const& rng) const {
    using T = value_type;
    auto xi = rng.template normal<dim>(purpose::proposal);
    chain_state<S, dim> p;
    p.x = euler_maruyama(s.x, s.grad, xi, step_size, noise_scale);
    p.energy = energy.value_and_grad(p.x, p.grad);
    // log q(x | x') − log q(x' | x): the forward term |x' − x + η∇U(x)|²/4η is |ξ|²/2.
    S fwd = S(0), rev = S(0);
    for (int i = 0; i < dim; ++i) {
      S d = s.x[i] - p.x[i] + S(step_size) * p.grad[i];
      rev = rev + d * d;
      fwd = fwd + xi[i] * xi[i];
    }
    S log_ratio = s.energy - p.energy + S(T(0.5)) * fwd - S(inv_4eta) * rev;
    return metropolis_hastings(s, p, log_ratio, rng.uniform(purpose::accept), !is_finite(p.energy));
  }

  void validate() const { detail::require_step_size(double(step_size), "ember::mala"); }
};

struct mala_fn {
  template <class E>
  auto operator()(E const& U, mala_options o) const {
    static_assert(DifferentiableEnergy<E>,
                  "ember::mala needs a differentiable energy: a type with dim, value_type, "
                  "value(x) and value_and_grad(x, g); wrap a plain callable in custom_energy<D>(f)");
    using T = typename E::value_type;
    mala_kernel<E> k{U, T(o.step_size), T(std::sqrt(2 * o.step_size)), T(0.25 / o.step_size)};
    k.validate();
    return k;
  }
};
/// `mala(U, {.step_size = η})`.
inline constexpr mala_fn mala{};

}  // namespace ember
