#pragma once
/// \file
/// `ula`: the unadjusted Langevin algorithm, x ← x − η∇U(x) + √(2η) ξ (Euler–Maruyama on the
/// overdamped Langevin SDE). No accept step: cheap, and biased by O(η) in its stationary law.
/// `ula(U, {.step_size = η})` returns a `ula_kernel`, which models `TransitionKernel`.

#include <ember/core/chain_state.hpp>
#include <ember/core/concepts.hpp>
#include <ember/core/rng.hpp>
#include <ember/integrator/euler_maruyama.hpp>
#include <ember/kernel/detail/validate.hpp>

#include <cmath>

namespace ember {

struct ula_options {
  double step_size = 0;  ///< η > 0
};

template <class E>
struct ula_kernel {
  using energy_type = E;
  using value_type = typename E::value_type;
  static constexpr int dim = E::dim;

  E energy;
  value_type step_size;
  value_type noise_scale;  // √(2η), precomputed

  template <class S>
  EMBER_HD chain_state<S, dim> init(vec<S, dim> const& x) const {
    return make_state(energy, x);
  }

  template <class S>
  EMBER_HD EMBER_INLINE step_info<S> step(chain_state<S, dim>& s, chain_rng<S> const& rng) const {
    auto xi = rng.template normal<dim>(purpose::proposal);
    auto const y = euler_maruyama(s.x, s.grad, xi, step_size, noise_scale);
    // Coordinate by coordinate: assigning the whole vec compiles to a call of memcpy on the host.
    EMBER_UNROLL
    for (int i = 0; i < dim; ++i) s.x[i] = y[i];
    s.energy = energy.value_and_grad(s.x, s.grad);
    return {S(1), !is_finite(s.energy), S(1), S(1)};
  }

  void validate() const { detail::require_step_size(double(step_size), "ember::ula"); }
};

struct ula_fn {
  template <class E>
  auto operator()(E const& U, ula_options o) const {
    static_assert(DifferentiableEnergy<E>,
                  "ember::ula needs a differentiable energy: a type with dim, value_type, "
                  "value(x) and value_and_grad(x, g); wrap a plain callable in custom_energy<D>(f)");
    using T = typename E::value_type;
    ula_kernel<E> k{U, T(o.step_size), T(std::sqrt(2 * o.step_size))};
    k.validate();
    return k;
  }
};
/// `ula(U, {.step_size = η})`.
inline constexpr ula_fn ula{};

}  // namespace ember
