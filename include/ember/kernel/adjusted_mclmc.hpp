#pragma once
/// \file
/// `adjusted_mclmc`: Metropolis-adjusted microcanonical HMC, MAMS (Robnik, Cohn-Gordon & Seljak
/// 2025, arXiv 2503.01707; BlackJAX's `adjusted_mclmc_dynamic`). A transition draws a unit
/// velocity u uniformly on the sphere (whitened, M⁻¹ = L Lᵀ), runs n steps of an isokinetic
/// integrator (integrator/isokinetic.hpp; McLachlan's by default, as BlackJAX), and accepts the
/// end with probability min(1, e^{−W}), W = ΔU + the kinetic energy change the kicks report. A
/// transition whose W exceeds the divergence threshold (or is NaN) is divergent and rejected.
///
/// Trajectory length. `.trajectory_length = L` is the mean time of a trajectory: transition t
/// takes n = max(1, ⌈hₜ s⌉) steps, hₜ the base-2 Halton number of t + 1 and s chosen so that n
/// averages L/ε (BlackJAX's `rescale`), at most `.max_integrator_steps` (a transition cut there
/// is *truncated*: a run counts it). The number is the same for every chain of a run, so SIMD
/// lanes and a warp stay in step; BlackJAX draws it per chain. `.random_length = false` takes
/// ⌈L/ε⌉ steps every time. A warm-up adapts ε and L (`mams(U)`, kernel/mams.hpp).
///
/// Approach form (`with_approach(true)`, set by the `approach()` adapter early in `mams(U)`'s
/// warm-up, adapt/approach.hpp): the transition is HMC instead, a Gaussian momentum and
/// min(n, 16) velocity Verlet steps of the same ε under the same metric, so that chains far from
/// the typical set gain speed as their energy falls.
///
/// The stationary law is exp(−U) for every ε and L, in either form (tests/kernel/adjusted_mclmc_test.cpp
/// and tests/adapt/approach_test.cpp check it from exact draws of a correlated Gaussian). Needs at
/// least 2 dimensions.

#include <ember/core/chain_state.hpp>
#include <ember/core/concepts.hpp>
#include <ember/core/halton.hpp>
#include <ember/core/metric.hpp>
#include <ember/core/rng.hpp>
#include <ember/integrator/isokinetic.hpp>
#include <ember/integrator/palindromic.hpp>
#include <ember/kernel/detail/validate.hpp>
#include <ember/kernel/metropolis.hpp>

#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

namespace ember {

struct adjusted_mclmc_options {
  std::optional<double> step_size = std::nullopt;  ///< ε > 0; leave it out when a warm-up adapts it
  double trajectory_length = 0;        ///< L > 0, the mean trajectory time; 0: a warm-up adapts it
  bool random_length = true;           ///< n of transition t quasi-random around L/ε (false: ⌈L/ε⌉)
  double mass = 1;                     ///< scalar mass m > 0 (a warm-up adapts a metric)
  double divergence_threshold = 1000;  ///< an energy error above this marks a divergent transition
  int max_integrator_steps = 1024;     ///< cap on the integrator steps of one transition
};

namespace detail {
/// s such that ⌈h s⌉, h uniform on (0, 1), has mean μ ≥ 1 (BlackJAX's `rescale`): with k = ⌊2μ − 1⌋,
/// s = k(k + 1) / (2(k + 1 − μ)), which lies in [k, k + 1).
EMBER_HD inline double mean_steps_scale(double mu) {
  if (!(mu > 1)) return 1;
  double const k = std::floor(2 * mu - 1);
  return k * (k + 1) / (2 * (k + 1 - mu));
}
}  // namespace detail

template <class E, class Integrator = isokinetic_mclachlan, class Metric = scalar_metric<typename E::value_type>>
struct adjusted_mclmc_kernel {
  using energy_type = E;
  using integrator_type = Integrator;
  using metric_type = Metric;
  using value_type = typename E::value_type;
  static constexpr int dim = E::dim;
  static_assert(dim >= 2, "ember::adjusted_mclmc needs at least 2 dimensions (its velocity lives on a sphere)");
  /// The step-size adaptation's target (the MAMS paper's 0.9: its energy error grows more slowly with ε than HMC's).
  static constexpr double target_acceptance = 0.9;

  E energy;
  Metric metric;
  value_type step_size;
  value_type trajectory_length = 0;
  bool random_length = true;
  value_type divergence_threshold = 1000;
  int max_integrator_steps = 1024;
  bool approach = false;  ///< transitions are HMC (the approach form; adapt/approach.hpp)
  /// The approach form's most integrator steps a transition. Short trajectories: a chain far up a
  /// slope gains speed as it falls and loses most of it at the next momentum draw, so its energy
  /// falls geometrically; long ones under a metric not yet adapted fling chains across the space
  /// and the step size collapses (earnings-logearn_interaction with L/ε steps: chains off, R̂ 1.9).
  static constexpr int approach_steps = 16;

  /// Integrator steps of transition t (the same for every chain); `capped`: the cap cut them.
  EMBER_HD int integrator_steps_at(std::uint32_t t, bool& capped) const {
    double const mu = double(trajectory_length) / double(step_size);
    double n = random_length ? std::ceil(halton(std::uint64_t(t) + 1, 2) * detail::mean_steps_scale(mu)) : std::ceil(mu);
    capped = n > max_integrator_steps;
    return n < 1 ? 1 : capped ? max_integrator_steps : int(n);
  }
  /// Integrator steps transition t takes in the kernel's form: in the approach form at most
  /// `approach_steps` of velocity Verlet (cut there by design, so never counted as truncated).
  EMBER_HD int steps_taken_at(std::uint32_t t, bool& capped) const {
    int const n = integrator_steps_at(t, capped);
    if (!approach) return n;
    capped = false;
    return n > approach_steps ? approach_steps : n;
  }
  /// Gradient evaluations of one integrator step in the kernel's form.
  EMBER_HD int gradients_per_step() const {
    return approach ? velocity_verlet::gradients_per_step : Integrator::gradients_per_step;
  }
  /// Gradient evaluations of one chain at transition t (a benchmark matrix counts with it).
  EMBER_HD int gradients_at(std::uint32_t t) const {
    bool capped;
    return gradients_per_step() * steps_taken_at(t, capped);
  }
  /// The most gradients one transition evaluates.
  int max_gradients() const { return Integrator::gradients_per_step * max_integrator_steps; }

  template <class S>
  EMBER_HD chain_state<S, dim> init(vec<S, dim> const& x) const {
    return make_state(energy, x);
  }

  template <class S>
  EMBER_HD step_info<S> step(chain_state<S, dim>& s, chain_rng<S> const& rng) const {
    return transition<false>(s, rng, static_cast<trajectory_end<S, dim>*>(nullptr));
  }
  /// The same transition, also reporting where the trajectory ended (a warm-up's length adapter reads it).
  template <class S>
  EMBER_HD step_info<S> step(chain_state<S, dim>& s, chain_rng<S> const& rng, trajectory_end<S, dim>& end) const {
    return transition<true>(s, rng, &end);
  }

  adjusted_mclmc_kernel with_step_size(double eps) const {
    adjusted_mclmc_kernel k = *this;
    k.step_size = value_type(eps);
    return k;
  }
  template <class M>
  adjusted_mclmc_kernel<E, Integrator, M> with_metric(M const& m) const {
    return {energy, m, step_size, trajectory_length, random_length, divergence_threshold, max_integrator_steps, approach};
  }
  adjusted_mclmc_kernel with_trajectory_length(double L) const {
    adjusted_mclmc_kernel k = *this;
    k.trajectory_length = value_type(L);
    return k;
  }
  adjusted_mclmc_kernel with_approach(bool on) const {
    adjusted_mclmc_kernel k = *this;
    k.approach = on;
    return k;
  }

  void validate() const { validate_as("ember::adjusted_mclmc", "ember::mams(U) sets one up"); }

 protected:
  /// The checks of `validate`, naming `who` and the warm-up that would set a missing length.
  void validate_as(char const* who, char const* warmup) const {
    detail::require_step_size(double(step_size), who);
    if (!(trajectory_length > 0) || !std::isfinite(double(trajectory_length)))
      throw std::invalid_argument(std::string(who) +
                                  ": the trajectory length must be positive and finite (give .trajectory_length = L, "
                                  "or let a warm-up adapt it: " + warmup + ")");
    metric.validate(who);
    detail::require_divergence_threshold(double(divergence_threshold), who);
    if (max_integrator_steps < 1) throw std::invalid_argument(std::string(who) + ": max_integrator_steps must be at least 1");
  }

  template <bool Observe, class S>
  EMBER_HD step_info<S> transition(chain_state<S, dim>& s, chain_rng<S> const& rng, trajectory_end<S, dim>* end) const {
    using T = value_type;
    bool capped;
    int const n = steps_taken_at(rng.step, capped);
    // A standard normal: the approach form's momentum, or normalised, a direction uniform on the sphere.
    auto u = rng.template normal<dim>(purpose::proposal);
    S z2 = S(T(0));
    for (int i = 0; i < dim; ++i) z2 = fmadd(u[i], u[i], z2);
    chain_state<S, dim> q = s;
    S w;
    if (approach) {
      velocity_verlet::steps(energy, q, u, T(step_size), metric, n);
      S k1 = S(T(0));
      for (int i = 0; i < dim; ++i) k1 = fmadd(u[i], u[i], k1);
      w = q.energy - s.energy + S(T(0.5)) * (k1 - z2);
    } else {
      S const rz = S(T(1)) / sqrt(z2);
      for (int i = 0; i < dim; ++i) u[i] = u[i] * rz;
      S dk = S(T(0));
      Integrator::steps(energy, q, u, T(step_size), metric, n, dk);
      w = q.energy - s.energy + dk;
    }
    if constexpr (Observe) {
      end->x = q.x;
      end->velocity = metric.apply(u);
    }
    auto info = metropolis_hastings(s, q, -w, rng.uniform(purpose::accept), !(w <= S(divergence_threshold)));
    info.gradients = S(T(gradients_per_step() * n));
    info.truncated = mask_t<S>(capped);
    return info;
  }
};

template <class Integrator = isokinetic_mclachlan>
struct adjusted_mclmc_fn {
  template <class E>
  auto operator()(E const& U, adjusted_mclmc_options o = {}) const {
    static_assert(DifferentiableEnergy<E>,
                  "ember::adjusted_mclmc needs a differentiable energy: a type with dim, value_type, "
                  "value(x) and value_and_grad(x, g); wrap a plain callable in custom_energy<D>(f)");
    using T = typename E::value_type;
    if (!(o.mass > 0) || !std::isfinite(o.mass))
      throw std::invalid_argument("ember::adjusted_mclmc: the mass must be positive and finite");
    adjusted_mclmc_kernel<E, Integrator> k{U,
                                           scalar_metric<T>{T(1.0 / std::sqrt(o.mass))},
                                           T(o.step_size.value_or(std::numeric_limits<double>::quiet_NaN())),
                                           T(o.trajectory_length),
                                           o.random_length,
                                           T(o.divergence_threshold),
                                           o.max_integrator_steps};
    if (!(o.trajectory_length >= 0) || !std::isfinite(o.trajectory_length))
      throw std::invalid_argument("ember::adjusted_mclmc: the trajectory length must be finite and non-negative");
    detail::require_divergence_threshold(o.divergence_threshold, "ember::adjusted_mclmc");
    if (o.max_integrator_steps < 1) throw std::invalid_argument("ember::adjusted_mclmc: max_integrator_steps must be at least 1");
    // Without a step size or a length the kernel waits for a warm-up to adapt them; a run checks again.
    if (o.step_size && o.trajectory_length > 0) k.validate();
    return k;
  }
};
/// `adjusted_mclmc(U, {.step_size = ε, .trajectory_length = L})`; `adjusted_mclmc_with<isokinetic_velocity_verlet>(U, {...})`
/// integrates with another isokinetic integrator. `mams(U)` (kernel/mams.hpp) adapts ε, L and a metric.
inline constexpr adjusted_mclmc_fn<> adjusted_mclmc{};
template <class Integrator>
inline constexpr adjusted_mclmc_fn<Integrator> adjusted_mclmc_with{};

}  // namespace ember
