#pragma once
/// \file
/// `mclmc`: unadjusted microcanonical Langevin Monte Carlo (Robnik, De Luca, Silverstein & Seljak
/// 2023; BlackJAX's `mclmc`). **Biased**: there is no accept step, so its draws follow exp(−U)
/// only up to the integrator's error, which grows with the step size ε (use `mams(U)` for exact
/// draws at about the same cost).
///
/// The velocity u is a unit vector in whitened coordinates (M⁻¹ = L Lᵀ) carried from transition
/// to transition in the state (`phase_state::p`). Each integrator step is one step of the
/// isokinetic integrator of adjusted MCLMC (integrator/isokinetic.hpp; McLachlan's by default)
/// followed by a partial refresh of the velocity,
///
///     u ← normalise(u + ν z),   z ~ N(0, I),   ν = √((e^{2ε/L} − 1)/d),
///
/// which forgets the direction over a time of about L (the momentum decoherence length). A
/// transition is ⌈L/ε⌉ such steps (at most `.max_integrator_steps`), so that a kept draw is one
/// decoherence length from the last and `.steps` means what it means for `mams` and `hmc`: the
/// chain advances at every step, and the steps between kept draws only thin them (a transition
/// cut at the cap is counted as truncated). A transition one of whose steps has an energy error
/// (ΔU plus the kick's kinetic energy change) that is not finite or exceeds the divergence
/// threshold in size is divergent; nothing undoes it.
///
/// Warm-up: `mclmc(U) | mams_warmup(n)` (kernel/mams.hpp) adapts ε, L and the metric (auto_mass()
/// by default) with `mams(U)`'s adapters. The step size aims where BlackJAX tunes MCLMC's, an
/// energy error per integrator step of variance v·d with v = 5·10⁻⁴ (`mclmc_find_L_and_step_size`),
/// read the way every ember step size is read, as an acceptance: a transition reports as `accept_prob` the mean
/// over its steps of min(1, e^{−ΔE}), the acceptance a Metropolis test would give each step (ΔE is
/// that step's exact Metropolis–Hastings log-ratio, so E[e^{−ΔE}] = 1 at stationarity), and for
/// energy errors ΔE ~ N(σ²/2, σ²) that mean is 2Φ(−σ/2); `target_acceptance` is its value at
/// σ² = v·d (0.987 at d = 2, 0.97 at d = 10, 0.91 at d = 100, 0.72 at d = 1000). Energy errors are
/// not Gaussian, and the mean acceptance weighs their tail less than a variance does: on a
/// correlated 10-d Gaussian the tuned step gives Var[ΔE]/d ≈ 1.2·10⁻³, 2.4× BlackJAX's target
/// (bench/results/2026-12-01-mclmc.md). While chains still approach (the `approach()` adapter,
/// adapt/approach.hpp) a transition is adjusted MCLMC's approach form, HMC trajectories with an
/// accept step, whose acceptance the step size then aims at the same target (a smaller ε than
/// MAMS's 0.9 while chains come in), and the velocity is drawn afresh after it. The bias at the
/// tuned step size is measured in docs/tuning.md.
///
/// `mclmc(U, {.step_size = ε, .trajectory_length = L})` returns an `mclmc_kernel`, which models
/// `TransitionKernel`. Needs at least 2 dimensions.

#include <ember/core/phase_state.hpp>
#include <ember/kernel/adjusted_mclmc.hpp>

#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

namespace ember {

namespace detail {
/// 2Φ(−√(v d)/2) with v = 5·10⁻⁴ (kernel/mclmc.hpp's file comment): Φ(−x) = ½ erfc(x/√2), erf
/// by its Taylor series (z = x/√2 ≤ 2.5 for d ≤ 10⁵, where 80 terms are exact to 1e−12; d is
/// capped there), summed until a term is below 10⁻³⁰.
constexpr double mclmc_target_acceptance(int d) {
  double const v = 5e-4 * (d < 100000 ? d : 100000);
  double lo = 0, hi = v < 1 ? 1 : v;  // √v by bisection (std::sqrt is not constexpr)
  for (int i = 0; i < 200; ++i) {
    double const m = 0.5 * (lo + hi);
    (m * m < v ? lo : hi) = m;
  }
  double const s = 0.5 * (lo + hi);
  double const z = s / 2 / 1.4142135623730951;
  double term = z, erf = 0;  // erf(z) = 2/√π Σ (−1)ⁿ z^{2n+1} / (n! (2n + 1))
  // Until the terms are negligible: a term that underflows is an error in a constant expression to nvcc.
  for (int n = 0; n < 80 && (term > 1e-30 || term < -1e-30); ++n) {
    erf += term / (2 * n + 1);
    term *= -z * z / (n + 1);
  }
  erf *= 1.1283791670955126;
  return 1 - erf;  // 2Φ(−x) = erfc(x/√2)
}
}  // namespace detail

struct mclmc_options {
  std::optional<double> step_size = std::nullopt;  ///< ε > 0; leave it out when a warm-up adapts it
  double trajectory_length = 0;        ///< L > 0, the decoherence length; 0: a warm-up adapts it
  double mass = 1;                     ///< scalar mass m > 0 (a warm-up adapts a metric)
  double divergence_threshold = 1000;  ///< an energy error above this in size marks a divergent transition
  int max_integrator_steps = 1024;     ///< cap on the integrator steps of one transition
};

/// The unadjusted MCLMC kernel. It extends `adjusted_mclmc_kernel`, whose approach form is its
/// own and whose parameters (ε, L, metric, caps) it shares, so every MAMS adapter tunes it.
template <class E, class Integrator = isokinetic_mclachlan, class Metric = scalar_metric<typename E::value_type>>
struct mclmc_kernel : adjusted_mclmc_kernel<E, Integrator, Metric> {
  using adjusted = adjusted_mclmc_kernel<E, Integrator, Metric>;
  using typename adjusted::value_type;
  using adjusted::dim;
  /// No accept step: every transition is kept (a result reports no target acceptance).
  static constexpr bool unadjusted = true;
  /// What a warm-up's step_size() aims at: the per-step acceptance of energy errors of variance
  /// 5·10⁻⁴ d (file comment).
  static constexpr double target_acceptance = detail::mclmc_target_acceptance(dim);

  /// The state at x with the velocity (1, …, 1)/√d.
  template <class S>
  EMBER_HD phase_state<S, dim> init(vec<S, dim> const& x) const {
    return make_phase_state(this->energy, x, filled<S, dim>(value_type(1) / sqrt(value_type(dim))));
  }
  /// The state at x with a velocity uniform on the sphere (what a run uses).
  template <class S>
  EMBER_HD phase_state<S, dim> init(vec<S, dim> const& x, chain_rng<S> const& rng) const {
    return make_phase_state(this->energy, x, random_direction(rng, initial_momentum));
  }

  /// Integrator steps of one (unadjusted) transition: ⌈L/ε⌉, within [1, max_integrator_steps];
  /// `capped`: the cap cut them.
  EMBER_HD int steps_per_transition(bool& capped) const {
    double const n = std::ceil(double(this->trajectory_length) / double(this->step_size));
    capped = n > this->max_integrator_steps;
    return !(n >= 1) ? 1 : capped ? this->max_integrator_steps : int(n);
  }
  EMBER_HD int steps_per_transition() const {
    bool capped;
    return steps_per_transition(capped);
  }
  /// Gradient evaluations of one chain at transition t (a benchmark matrix counts with it).
  EMBER_HD int gradients_at(std::uint32_t t) const {
    return this->approach ? adjusted::gradients_at(t) : Integrator::gradients_per_step * steps_per_transition();
  }

  template <class S>
  EMBER_HD step_info<S> step(phase_state<S, dim>& s, chain_rng<S> const& rng) const {
    if (this->approach) return approach_transition<false>(s, rng, static_cast<trajectory_end<S, dim>*>(nullptr));
    return unadjusted_transition(s, rng);
  }
  /// The same transition, also reporting where it ended (a warm-up's mams_length() reads it).
  template <class S>
  EMBER_HD step_info<S> step(phase_state<S, dim>& s, chain_rng<S> const& rng, trajectory_end<S, dim>& end) const {
    if (this->approach) return approach_transition<true>(s, rng, &end);
    auto info = unadjusted_transition(s, rng);
    end.x = s.x;
    end.velocity = this->metric.apply(s.p);
    return info;
  }

  mclmc_kernel with_step_size(double eps) const { return {adjusted::with_step_size(eps)}; }
  mclmc_kernel with_trajectory_length(double L) const { return {adjusted::with_trajectory_length(L)}; }
  mclmc_kernel with_approach(bool on) const { return {adjusted::with_approach(on)}; }
  template <class M>
  mclmc_kernel<E, Integrator, M> with_metric(M const& m) const {
    return {adjusted::with_metric(m)};
  }

  void validate() const { this->validate_as("ember::mclmc", "mclmc(U) | mams_warmup(n)"); }

 private:
  template <class S>
  EMBER_HD vec<S, dim> random_direction(chain_rng<S> const& rng, purpose p) const {
    auto u = rng.template normal<dim>(p);
    S n2 = S(value_type(0));
    for (int i = 0; i < dim; ++i) n2 = fmadd(u[i], u[i], n2);
    S const r = S(value_type(1)) / sqrt(n2);
    for (int i = 0; i < dim; ++i) u[i] = u[i] * r;
    return u;
  }

  // The approach form's adjusted transition on the position part; the velocity then drawn afresh,
  // uniform on the sphere and independent of x, as the unadjusted dynamics' stationary law has it.
  template <bool Observe, class S>
  EMBER_HD step_info<S> approach_transition(phase_state<S, dim>& s, chain_rng<S> const& rng, trajectory_end<S, dim>* end) const {
    auto info = adjusted::template transition<Observe>(static_cast<chain_state<S, dim>&>(s), rng, end);
    s.p = random_direction(rng, purpose::refresh);
    return info;
  }

  template <class S>
  EMBER_HD step_info<S> unadjusted_transition(phase_state<S, dim>& s, chain_rng<S> const& rng) const {
    using T = value_type;
    bool capped;
    int const n = steps_per_transition(capped);
    T const eps = this->step_size;
    T const nu = sqrt(expm1(T(2) * eps / this->trajectory_length) / T(dim));
    S dk = S(T(0)), a = S(T(0));
    mask_t<S> diverged(false);
    constexpr int blocks = (dim + 3) / 4;
    for (int l = 0; l < n; ++l) {
      S const u_before = s.energy, k_before = dk;
      Integrator::steps(this->energy, s, s.p, eps, this->metric, 1, dk);
      // The acceptance a Metropolis test would give this step (0 where its error is NaN).
      S const de = (s.energy - u_before) + (dk - k_before);
      a = a + select(de <= S(T(0)), S(T(1)), select(de > S(T(0)), exp(-de), S(T(0))));
      diverged = diverged || !(abs(de) <= S(this->divergence_threshold));
      vec<S, dim> z;
      for (int b = 0; b < blocks; ++b) rng.template normal_block<dim>(purpose::refresh, b, z, std::uint32_t(l * blocks));
      S n2 = S(T(0));
      for (int i = 0; i < dim; ++i) {
        s.p[i] = fmadd(S(nu), z[i], s.p[i]);
        n2 = fmadd(s.p[i], s.p[i], n2);
      }
      S const r = S(T(1)) / sqrt(n2);
      for (int i = 0; i < dim; ++i) s.p[i] = s.p[i] * r;
    }
    step_info<S> info{S(T(1)), diverged, a * S(T(1) / T(n)), S(T(Integrator::gradients_per_step * n))};
    info.truncated = mask_t<S>(capped);
    return info;
  }
};

template <class Integrator = isokinetic_mclachlan>
struct mclmc_fn {
  template <class E>
  auto operator()(E const& U, mclmc_options o = {}) const {
    static_assert(DifferentiableEnergy<E>,
                  "ember::mclmc needs a differentiable energy: a type with dim, value_type, "
                  "value(x) and value_and_grad(x, g); wrap a plain callable in custom_energy<D>(f)");
    using T = typename E::value_type;
    if (!(o.mass > 0) || !std::isfinite(o.mass)) throw std::invalid_argument("ember::mclmc: the mass must be positive and finite");
    if (!(o.trajectory_length >= 0) || !std::isfinite(o.trajectory_length))
      throw std::invalid_argument("ember::mclmc: the trajectory length must be finite and non-negative");
    detail::require_divergence_threshold(o.divergence_threshold, "ember::mclmc");
    if (o.max_integrator_steps < 1) throw std::invalid_argument("ember::mclmc: max_integrator_steps must be at least 1");
    mclmc_kernel<E, Integrator> k{{U,
                                   scalar_metric<T>{T(1.0 / std::sqrt(o.mass))},
                                   T(o.step_size.value_or(std::numeric_limits<double>::quiet_NaN())),
                                   T(o.trajectory_length),
                                   true,
                                   T(o.divergence_threshold),
                                   o.max_integrator_steps}};
    // Without a step size or a length the kernel waits for a warm-up to adapt them; a run checks again.
    if (o.step_size && o.trajectory_length > 0) k.validate();
    return k;
  }
};
/// `mclmc(U, {.step_size = ε, .trajectory_length = L})`; `mclmc_with<isokinetic_velocity_verlet>(U, {...})`
/// integrates with another isokinetic integrator. `mclmc(U) | mams_warmup(n)` adapts ε, L and a
/// metric.
inline constexpr mclmc_fn<> mclmc{};
template <class Integrator>
inline constexpr mclmc_fn<Integrator> mclmc_with{};

}  // namespace ember
