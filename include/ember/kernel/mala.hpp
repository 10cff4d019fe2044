#pragma once
/// \file
/// `mala`: the Metropolis-adjusted Langevin algorithm, preconditioned by a metric M⁻¹ = L Lᵀ
/// (core/metric.hpp; the identity unless a warm-up adapts a diagonal or dense one). Proposes
/// x' = x − η L Lᵀ∇U(x) + √(2η) L ξ and accepts with probability
/// min(1, e^{U(x) − U(x')} q(x | x') / q(x' | x)), where q(y | x) = N(y; x − ηM⁻¹∇U(x), 2ηM⁻¹).
/// With u = Lᵀ∇U(x) and u' = Lᵀ∇U(x'): log q(x' | x) = −|ξ|²/2 + c and
/// log q(x | x') = −|η(u + u') − √(2η) ξ|²/4η + c, so no triangular solve is needed.
/// One gradient per transition: the proposal's gradient is kept if it is accepted.
/// A transition whose energy error −log r (the negative log acceptance ratio, MALA's counterpart
/// of HMC's ΔH) exceeds `divergence_threshold`, or is NaN, is reported as divergent, as HMC's:
/// it is rejected anyway (e^{−1000} = 0), but counted, so a step too long for a region (a funnel's
/// neck) shows in `divergent_transitions()` and the summary instead of only as low acceptance.
/// `mala(U, {.step_size = η})` returns a `mala_kernel`, which models `TransitionKernel`.

#include <ember/core/chain_state.hpp>
#include <ember/core/concepts.hpp>
#include <ember/core/rng.hpp>
#include <ember/kernel/detail/validate.hpp>
#include <ember/core/metric.hpp>
#include <ember/kernel/metropolis.hpp>

#include <cmath>
#include <limits>
#include <optional>

namespace ember {

struct mala_options {
  std::optional<double> step_size = std::nullopt;  ///< η > 0; leave it out when a warm-up adapts it
  double divergence_threshold = 1000;              ///< −log r above this marks a divergent transition
};

template <class E, class Metric = identity_metric>
struct mala_kernel {
  using energy_type = E;
  using metric_type = Metric;
  using value_type = typename E::value_type;
  static constexpr int dim = E::dim;
  /// The target acceptance rate of step-size adaptation (Roberts & Rosenthal 1998).
  static constexpr double target_acceptance = 0.574;

  E energy;
  Metric metric;
  value_type step_size;
  value_type noise_scale;  // √(2η)
  value_type inv_4eta;     // 1/(4η)
  value_type divergence_threshold = value_type(1000);

  template <class S>
  EMBER_HD chain_state<S, dim> init(vec<S, dim> const& x) const {
    return make_state(energy, x);
  }

  template <class S>
  EMBER_HD step_info<S> step(chain_state<S, dim>& s, chain_rng<S> const& rng) const {
    return transition(s, rng, S(step_size), S(noise_scale), S(inv_4eta));
  }
  /// The same transition with step size `eta` per lane (each chain its own; per_chain_step_size.hpp).
  template <class S>
  EMBER_HD step_info<S> step(chain_state<S, dim>& s, chain_rng<S> const& rng, S const& eta) const {
    using T = value_type;
    return transition(s, rng, eta, sqrt(S(T(2)) * eta), S(T(0.25)) / eta);
  }

  /// A copy with another step size (its derived constants recomputed).
  mala_kernel with_step_size(double eta) const {
    return {energy, metric, value_type(eta), value_type(std::sqrt(2 * eta)), value_type(0.25 / eta), divergence_threshold};
  }
  /// A copy with another metric (its type may differ: an adapted diagonal or dense one).
  template <class M>
  mala_kernel<E, M> with_metric(M const& m) const {
    return {energy, m, step_size, noise_scale, inv_4eta, divergence_threshold};
  }

  void validate() const {
    detail::require_step_size(double(step_size), "ember::mala");
    metric.validate("ember::mala");
    detail::require_divergence_threshold(double(divergence_threshold), "ember::mala");
  }

 private:
  // eta, √(2η) and 1/(4η) as lanes: broadcasts of the kernel's constants, or per chain.
  template <class S>
  EMBER_HD step_info<S> transition(chain_state<S, dim>& s, chain_rng<S> const& rng, S const& eta, S const& noise,
                                   S const& inv4eta) const {
    using T = value_type;
    auto xi = rng.template normal<dim>(purpose::proposal);
    decltype(auto) u = metric.apply_transpose(s.grad);
    vec<S, dim> w;
    for (int i = 0; i < dim; ++i) w[i] = noise * xi[i] - eta * u[i];
    decltype(auto) lw = metric.apply(w);
    chain_state<S, dim> p;
    for (int i = 0; i < dim; ++i) p.x[i] = s.x[i] + lw[i];
    p.energy = energy.value_and_grad(p.x, p.grad);
    decltype(auto) u1 = metric.apply_transpose(p.grad);
    // log q(x | x') − log q(x' | x): the forward term is |ξ|²/2.
    S fwd = S(0), rev = S(0);
    for (int i = 0; i < dim; ++i) {
      S d = eta * (u[i] + u1[i]) - noise * xi[i];
      rev = rev + d * d;
      fwd = fwd + xi[i] * xi[i];
    }
    S log_ratio = s.energy - p.energy + S(T(0.5)) * fwd - inv4eta * rev;
    auto info = metropolis_hastings(s, p, log_ratio, rng.uniform(purpose::accept),
                                    !is_finite(p.energy) || !(-log_ratio <= S(divergence_threshold)));
    info.gradients = S(T(1));
    return info;
  }
};

struct mala_fn {
  template <class E>
  auto operator()(E const& U, mala_options o = {}) const {
    static_assert(DifferentiableEnergy<E>,
                  "ember::mala needs a differentiable energy: a type with dim, value_type, "
                  "value(x) and value_and_grad(x, g); wrap a plain callable in custom_energy<D>(f)");
    auto k = mala_kernel<E>{U, {}, 0, 0, 0, typename E::value_type(o.divergence_threshold)}.with_step_size(
        o.step_size.value_or(std::numeric_limits<double>::quiet_NaN()));
    // Without a step size the kernel waits for a warm-up to adapt one (a run checks it again);
    // the threshold is checked at once either way.
    if (o.step_size)
      k.validate();
    else
      detail::require_divergence_threshold(o.divergence_threshold, "ember::mala");
    return k;
  }
};
/// `mala(U, {.step_size = η})`.
inline constexpr mala_fn mala{};

}  // namespace ember
