#pragma once
/// \file
/// `hmc`: Hamiltonian Monte Carlo. Draws a whitened momentum v ~ N(0, I), runs L steps of a
/// palindromic integrator (velocity Verlet by default) on H = U(x) + ½|v|² with the metric
/// M⁻¹ = L Lᵀ (core/metric.hpp: a scalar mass by default; diagonal or dense when adapted), and
/// accepts with probability min(1, e^{−ΔH}). The gradient at the current state is cached, so a
/// transition costs L gradient evaluations with velocity Verlet. A transition whose ΔH exceeds the
/// divergence threshold (or is NaN) is reported as divergent, as in Stan and BlackJAX.
///
/// Per transition t, the same for every chain (so SIMD lanes and warps stay in step):
///  - with `.jitter = j`, the step size is ε·(1 + j(2hₜ − 1)), hₜ the base-3 Halton number of t,
///    so a hand-picked ε·L cannot sit on a resonance of the target (a full or half period);
///  - with `.trajectory_length = T` (what ChEES adapts), the number of integrator steps is
///    ⌈uₜ T / ε⌉ with uₜ the base-2 Halton number of t + 1 (Hoffman, Radul & Sountsov 2021), at
///    most `.max_integrator_steps`; otherwise it is `.integrator_steps`.
/// Under `warmup(n, step_size(per_chain))` each chain has its own ε (jittered by the same
/// factor), and every chain runs `.integrator_steps` steps (kernel/per_chain_step_size.hpp).
/// `hmc(U, {.step_size = ε, .integrator_steps = L})` returns an `hmc_kernel`, which models `TransitionKernel`.

#include <ember/core/chain_state.hpp>
#include <ember/core/concepts.hpp>
#include <ember/core/halton.hpp>
#include <ember/core/rng.hpp>
#include <ember/integrator/palindromic.hpp>
#include <ember/kernel/detail/validate.hpp>
#include <ember/core/metric.hpp>
#include <ember/kernel/metropolis.hpp>

#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

namespace ember {

struct hmc_options {
  std::optional<double> step_size = std::nullopt;  ///< ε > 0; leave it out when a warm-up adapts it
  int integrator_steps = 0;              ///< L ≥ 1 integrator steps per transition; 0: unset (give L or T, or adapt T)
  double mass = 1;                       ///< scalar mass m > 0
  double divergence_threshold = 1000;    ///< ΔH above this marks a divergent transition
  double jitter = 0;                     ///< j in [0, 1): step size jittered over ε(1 ± j)
  double trajectory_length = 0;          ///< T > 0: ⌈uₜT/ε⌉ integrator steps (ChEES); 0: `integrator_steps`
  int max_integrator_steps = 1024;       ///< cap on the steps of one transition with a trajectory length
};

template <class E, class Integrator = velocity_verlet, class Metric = scalar_metric<typename E::value_type>>
struct hmc_kernel {
  using energy_type = E;
  using integrator_type = Integrator;
  using metric_type = Metric;
  using value_type = typename E::value_type;
  static constexpr int dim = E::dim;
  /// The target acceptance rate of step-size adaptation (Stan's, Hoffman & Gelman 2014).
  static constexpr double target_acceptance = 0.8;
  static constexpr bool reports_hamiltonian = true;  ///< step_info::hamiltonian (record_stats())

  E energy;
  Metric metric;
  value_type step_size;
  int integrator_steps;
  value_type divergence_threshold;
  value_type jitter = 0;
  value_type trajectory_length = 0;
  int max_integrator_steps = 1024;

  /// Step size and integrator steps of transition t (host and device; no per-chain value);
  /// `capped` says whether a trajectory length asked for more than `max_integrator_steps`.
  EMBER_HD int integrator_steps_at(std::uint32_t t, value_type& eps, bool& capped) const {
    eps = step_size;
    capped = false;
    if (jitter > 0) eps = value_type(double(step_size) * (1 + double(jitter) * (2 * halton(t + 1, 3) - 1)));
    if (!(trajectory_length > 0)) return integrator_steps;
    double n = std::ceil(halton(std::uint64_t(t) + 1, 2) * double(trajectory_length) / double(eps));
    capped = n > max_integrator_steps;
    return n < 1 ? 1 : capped ? max_integrator_steps : int(n);
  }
  EMBER_HD int integrator_steps_at(std::uint32_t t, value_type& eps) const {
    bool capped;
    return integrator_steps_at(t, eps, capped);
  }
  /// The most gradients one transition evaluates (a run keeps its per-chunk counts exact with it).
  int max_gradients() const {
    return Integrator::gradients_per_step * (trajectory_length > 0 ? max_integrator_steps : integrator_steps);
  }

  template <class S>
  EMBER_HD chain_state<S, dim> init(vec<S, dim> const& x) const {
    return make_state(energy, x);
  }

  template <class S>
  EMBER_HD step_info<S> step(chain_state<S, dim>& s, chain_rng<S> const& rng) const {
    value_type eps;
    bool capped;
    int const L = integrator_steps_at(rng.step, eps, capped);
    auto info = transition<false>(s, rng, static_cast<trajectory_end<S, dim>*>(nullptr), eps, L);
    info.truncated = mask_t<S>(capped);
    return info;
  }
  /// The same transition, also reporting where the trajectory ended (for ChEES).
  template <class S>
  EMBER_HD step_info<S> step(chain_state<S, dim>& s, chain_rng<S> const& rng, trajectory_end<S, dim>& end) const {
    value_type eps;
    bool capped;
    int const L = integrator_steps_at(rng.step, eps, capped);
    auto info = transition<true>(s, rng, &end, eps, L);
    info.truncated = mask_t<S>(capped);
    return info;
  }
  /// The same transition with step size `eps` per lane (each chain its own; per_chain_step_size.hpp),
  /// jittered by the same factor for every lane, and `.integrator_steps` steps for every lane so a
  /// SIMD batch or a warp stays in step (a trajectory length is refused there).
  template <class S>
  EMBER_HD step_info<S> step(chain_state<S, dim>& s, chain_rng<S> const& rng, S const& eps) const {
    static_assert(is_palindromic<Integrator>,
                  "ember::hmc: per-chain step sizes need a palindromic integrator (velocity_verlet, mclachlan, yoshida)");
    value_type f = 1;
    if (jitter > 0) f = value_type(1 + double(jitter) * (2 * halton(rng.step + 1, 3) - 1));
    return transition<false>(s, rng, static_cast<trajectory_end<S, dim>*>(nullptr), eps * S(f), integrator_steps);
  }

  /// A copy with another step size.
  hmc_kernel with_step_size(double eps) const {
    hmc_kernel k = *this;
    k.step_size = value_type(eps);
    return k;
  }
  /// A copy with another metric (its type may differ: an adapted diagonal or dense one).
  template <class M>
  hmc_kernel<E, Integrator, M> with_metric(M const& m) const {
    return {energy, m, step_size, integrator_steps, divergence_threshold, jitter, trajectory_length, max_integrator_steps};
  }
  /// A copy integrating for trajectory length T per transition (jittered by ChEES's Halton factor).
  hmc_kernel with_trajectory_length(double T) const {
    hmc_kernel k = *this;
    k.trajectory_length = value_type(T);
    return k;
  }

  void validate() const {
    detail::require_step_size(double(step_size), "ember::hmc");
    if (integrator_steps < 0)
      throw std::invalid_argument("ember::hmc: the number of integrator steps must be at least 1, got " +
                                  std::to_string(integrator_steps));
    // No default L: one leapfrog step per transition (the old default) is a random walk that
    // looks like HMC, and no other L suits every target.
    if (integrator_steps == 0 && !(trajectory_length > 0))
      throw std::invalid_argument(
          "ember::hmc: say how long a trajectory is: .integrator_steps = L or .trajectory_length = T, or let a warm-up "
          "adapt T with warmup(n, step_size(), auto_mass(), chees()), which ember::chees_hmc(U) sets up");
    metric.validate("ember::hmc");
    detail::require_divergence_threshold(double(divergence_threshold), "ember::hmc");
    if (!(jitter >= 0 && jitter < 1))
      throw std::invalid_argument("ember::hmc: the step-size jitter must be in [0, 1), got " +
                                  std::to_string(double(jitter)));
    if (!(trajectory_length >= 0) || !std::isfinite(double(trajectory_length)))
      throw std::invalid_argument("ember::hmc: the trajectory length must be finite and non-negative");
    if (max_integrator_steps < 1)
      throw std::invalid_argument("ember::hmc: max_integrator_steps must be at least 1");
  }

 private:
  // One trajectory of L steps of size eps (a scalar for all lanes, or one per lane).
  template <bool Observe, class S, class H>
  EMBER_HD step_info<S> transition(chain_state<S, dim>& s, chain_rng<S> const& rng, trajectory_end<S, dim>* end,
                                   H const& eps, int L) const {
    using T = value_type;
    auto v = rng.template normal<dim>(purpose::proposal);
    S k0 = S(0);
    for (int i = 0; i < dim; ++i) k0 = k0 + v[i] * v[i];
    chain_state<S, dim> q = s;
    Integrator::steps(energy, q, v, eps, metric, L);
    S k1 = S(0);
    for (int i = 0; i < dim; ++i) k1 = k1 + v[i] * v[i];
    S const h0 = s.energy + S(T(0.5)) * k0;
    S dh = (q.energy + S(T(0.5)) * k1) - h0;
    if constexpr (Observe) {
      end->x = q.x;
      end->velocity = metric.apply(v);
    }
    auto info = metropolis_hastings(s, q, -dh, rng.uniform(purpose::accept), !(dh <= S(divergence_threshold)));
    info.gradients = S(T(Integrator::gradients_per_step * L));
    info.hamiltonian = h0;
    return info;
  }
};

template <class Integrator = velocity_verlet>
struct hmc_fn {
  template <class E>
  auto operator()(E const& U, hmc_options o = {}) const {
    static_assert(DifferentiableEnergy<E>,
                  "ember::hmc needs a differentiable energy: a type with dim, value_type, "
                  "value(x) and value_and_grad(x, g); wrap a plain callable in custom_energy<D>(f)");
    using T = typename E::value_type;
    if (!(o.mass > 0) || !std::isfinite(o.mass)) throw std::invalid_argument("ember::hmc: the mass must be positive and finite");
    hmc_kernel<E, Integrator> k{U,
                                scalar_metric<T>{T(1.0 / std::sqrt(o.mass))},
                                T(o.step_size.value_or(std::numeric_limits<double>::quiet_NaN())),
                                o.integrator_steps,
                                T(o.divergence_threshold),
                                T(o.jitter),
                                T(o.trajectory_length),
                                o.max_integrator_steps};
    // Without a step size the kernel waits for a warm-up to adapt one; a run checks it again.
    if (o.step_size) k.validate();
    return k;
  }
};
/// `hmc(U, {.step_size = ε, .integrator_steps = L})` with velocity Verlet; `hmc_with<mclachlan>(U, {...})`
/// picks another palindromic integrator. L (or a trajectory length T) has no default.
inline constexpr hmc_fn<> hmc{};
template <class Integrator>
inline constexpr hmc_fn<Integrator> hmc_with{};

}  // namespace ember
