// 07_custom_kernel.hpp: random-walk Metropolis written outside the library, as a user would
// (docs/custom_kernels.md explains each member). It calls only the energy's value, so any energy
// with value(x) will do, with or without a gradient. 07_custom_kernel.cpp runs it; the tests
// (tests/kernel/custom_kernel_test.cpp) check its moments. Below it, an energy with value only.
#pragma once
#include <ember/ember.hpp>

#include <cmath>
#include <stdexcept>

template <class E>
struct rwm_kernel {
  using energy_type = E;
  using value_type = typename E::value_type;
  static constexpr int dim = E::dim;

  E energy;
  value_type step_size;  // σ: proposals x' = x + σ ξ, ξ ~ N(0, I)

  // S is float or double for one chain, or a SIMD batch of chains: write everything over S.
  template <class S>
  EMBER_HD ember::position_state<S, dim> init(ember::vec<S, dim> const& x) const {
    return ember::make_position_state(energy, x);
  }

  template <class S>
  EMBER_HD ember::step_info<S> step(ember::position_state<S, dim>& s, ember::chain_rng<S> const& rng) const {
    auto xi = rng.template normal<dim>(ember::purpose::proposal);
    ember::position_state<S, dim> p;
    for (int i = 0; i < dim; ++i) p.x[i] = s.x[i] + S(step_size) * xi[i];
    p.energy = energy.value(p.x);
    // The proposal is symmetric: accept with probability min(1, exp(U(x) − U(x'))). A proposal
    // 1000 or more above the current energy (or not finite) is reported divergent, as ember's
    // own Metropolis kernels do: rejected anyway, but counted.
    return ember::metropolis_hastings(s, p, s.energy - p.energy, rng.uniform(ember::purpose::accept),
                                      !(p.energy - s.energy <= S(1000)));
  }

  void validate() const {
    if (!(step_size > 0) || !std::isfinite(step_size))
      throw std::invalid_argument("rwm: the step size must be positive and finite");
  }

  // Optional: what "| warmup(n, step_size())" needs to tune σ (Roberts, Gelman & Gilks 1997).
  static constexpr double target_acceptance = 0.234;
  rwm_kernel with_step_size(double sigma) const { return {energy, value_type(sigma)}; }
};

// U(x) = |x₀| + |x₁|, a Laplace law (mean 0, variance 2, E|xᵢ| = 1): not differentiable at 0,
// and written with value only, so mala or hmc would refuse it; rwm_kernel takes it.
struct laplace_energy {
  using value_type = float;
  static constexpr int dim = 2;

  template <class S>
  EMBER_HD S value(ember::vec<S, dim> const& x) const {
    using ember::abs;  // for float; a batch finds xsimd::abs by argument-dependent lookup
    return abs(x[0]) + abs(x[1]);
  }
};
