#pragma once
/// \file
/// `chees()`: HMC trajectory-length adaptation by ChEES (Hoffman, Radul & Sountsov 2021).
/// The criterion is ChEES(T) = ¼ E[(‖x' − E x'‖² − ‖x − E x‖²)²], the change in the centred
/// squared distance from the ensemble mean over one transition. With the proposal x'(uT) at the
/// jittered time uT (u the transition's Halton number) and its velocity v' = dx'/dt, one chain's
/// estimate of dChEES/d log T is
///   g_c = uT · (‖x'_c − x̄'‖² − ‖x_c − x̄‖²) · ((x'_c − x̄') · v'_c),
/// and the ensemble estimate weights chains by their acceptance probability α_c:
/// g = Σ α_c g_c / Σ α_c, with x̄ the mean of the current states and x̄' the α-weighted mean of
/// the proposals, all in the metric's standardised coordinates (adapt/warmup.hpp). log T climbs g
/// with Adam without momentum (β₁ = 0, β₂ = 0.95, learning rate 0.025, each update clipped to
/// ±0.35; T kept within [ε, 1000ε], `clip`), and the kept T is the t^{−0.75}-weighted average of log T over warm-up (as dual
/// averaging keeps ε̄). When the metric changes, `rescale` converts T and that average to the new
/// metric's time, so neither the kept average nor Adam's next steps mix the two units.
/// `chees_state` is the arithmetic, `chees_adapter` the adapter (adapt/adapter.hpp); the step size
/// (adapt/step_size.hpp) then targets harmonic-mean acceptance 0.8. Needs at least 2 chains.

#include <ember/adapt/adapter.hpp>
#include <ember/adapt/step_size.hpp>
#include <ember/core/config.hpp>
#include <ember/core/halton.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace ember {

struct chees_state {
  double learning_rate = 0.025;
  double log_T = 0, log_T_bar = 0, v = 0;
  std::int64_t t = 0;  ///< updates so far (the averaging weights)
  std::int64_t n = 0;  ///< updates since Adam's last restart (its bias correction)
  std::int64_t clipped = 0;  ///< updates whose T was clipped to [ε, 1000ε]
  /// Since the last metric change (`rescale`): updates clipped at each bound, and all updates.
  std::int64_t clipped_low = 0, clipped_high = 0, recent = 0;
  static constexpr double beta2 = 0.95, max_step = 0.35, kappa = 0.75;
  /// T is kept within [ε, max_steps_per_trajectory · ε] (BlackJAX: 1000).
  static constexpr double max_steps_per_trajectory = 1000;

  void start(double T0) {
    log_T = std::log(T0);
    log_T_bar = log_T;
    v = 0;
    t = n = clipped = clipped_low = clipped_high = recent = 0;
  }
  /// After a metric change: T and its running average multiplied by `factor` (the same time in
  /// the new metric's units), and Adam's second moment restarted, since the gradient's scale
  /// changed with the metric.
  void rescale(double factor) {
    if (!(factor > 0) || !std::isfinite(factor)) return;
    log_T += std::log(factor);
    log_T_bar += std::log(factor);
    v = 0;
    n = 0;
    clipped_low = clipped_high = recent = 0;
  }
  /// One Adam step on log T with gradient estimate g (skipped if g is not finite).
  void update(double g) {
    if (!std::isfinite(g)) return;
    ++t;
    ++n;
    v = beta2 * v + (1 - beta2) * g * g;
    double const vhat = v / (1 - std::pow(beta2, double(n)));
    double step = learning_rate * g / (std::sqrt(vhat) + 1e-8);
    log_T += std::clamp(step, -max_step, max_step);
    double const eta = std::pow(double(t), -kappa);
    log_T_bar = eta * log_T + (1 - eta) * log_T_bar;
  }
  /// Keeps T within [lo, hi] (BlackJAX's [ε, 1000ε]): a funnel's neck drove T to 3·10⁵ at
  /// ε = 0.0066 (every transition at the step cap, the jitter lost), a regression's long warm-up
  /// to 10⁻⁶ < ε. Each update that lands outside is counted.
  void clip(double lo, double hi) {
    if (!(lo > 0 && hi >= lo && std::isfinite(hi))) return;
    double const l = std::log(lo), h = std::log(hi);
    ++recent;
    if (log_T < l || log_T > h) ++clipped;
    if (log_T < l) ++clipped_low;
    if (log_T > h) ++clipped_high;
    log_T = std::clamp(log_T, l, h);
  }
  double current() const { return std::exp(log_T); }
  double final() const { return std::exp(log_T_bar); }
};

namespace detail {

// ChEES, first pass: n, Σα, Σx (D), Σα x' (D).
template <class T, int D>
struct chees_means {
  static constexpr int size = 2 + 2 * D;
  chain_view<T> v;
  EMBER_HD void operator()(std::int64_t c, double* a) const {
    if (v.frozen[c]) return;
    double const al = double(v.accept_prob[c]);
    a[0] += 1;
    a[1] += al;
    for (int i = 0; i < D; ++i) {
      a[2 + i] += double(v.start[i * v.stride + c]);
      a[2 + D + i] += al * double(v.end[i * v.stride + c]);
    }
  }
};

// ChEES, second pass: Σα (‖x' − x̄'‖² − ‖x − x̄‖²)((x' − x̄')·v') in the metric's standardised
// coordinates, zᵢ = xᵢ/sᵢ with sᵢ² = (M⁻¹)ᵢᵢ (w = 1/s²).
template <class T, int D>
struct chees_gradient {
  static constexpr int size = 1;
  chain_view<T> v;
  double mean0[D], mean1[D], w[D];
  EMBER_HD void operator()(std::int64_t c, double* a) const {
    if (v.frozen[c]) return;
    double d0 = 0, d1 = 0, dv = 0;
    for (int i = 0; i < D; ++i) {
      double const r0 = double(v.start[i * v.stride + c]) - mean0[i];
      double const r1 = double(v.end[i * v.stride + c]) - mean1[i];
      d0 += w[i] * r0 * r0;
      d1 += w[i] * r1 * r1;
      dv += w[i] * r1 * double(v.velocity[i * v.stride + c]);
    }
    a[0] += double(v.accept_prob[c]) * (d1 - d0) * dv;
  }
};

// The metric's marginal scale of coordinate i, √(M⁻¹)ᵢᵢ = ‖row i of L‖.
template <class M>
double metric_sd(M const& m, int i) {
  if constexpr (requires { m.dense; }) {  // auto_metric: the one that applies
    return m.dense ? metric_sd(m.full, i) : metric_sd(m.diagonal, i);
  } else if constexpr (requires { m.lower[0]; }) {
    double s = 0;
    for (int j = 0; j <= i; ++j) s += double(m(i, j)) * double(m(i, j));
    return std::sqrt(s);
  } else if constexpr (requires { m.scale[0]; }) {
    return double(m.scale[i]);
  } else if constexpr (requires { m.scale; }) {
    return double(m.scale);
  } else {
    return 1.0;
  }
}

inline double checked_learning_rate(double rate) {
  if (!(rate > 0 && rate < 1e300))
    throw std::invalid_argument("ember::chees: learning_rate must be positive and finite, got " + std::to_string(rate));
  return rate;
}

}  // namespace detail

struct chees_adapter {
  double learning_rate = 0.025;

  static constexpr tunable tunes = tunable::trajectory_length;
  static constexpr observe observes = observe::trajectory;
  static constexpr bool harmonic_acceptance = true;

  template <class K, class Warmup>
  static consteval bool fits() {
    constexpr bool hmc = requires(K const& k) { k.with_trajectory_length(1.0); };
    constexpr bool step = any(Warmup::tuned, tunable::step_size);
    static_assert(hmc, "ember::warmup: chees() adapts HMC's trajectory length and needs an hmc kernel");
    static_assert(!hmc || step,
                  "ember::warmup: chees() needs step_size() beside it (the step size then targets harmonic-mean "
                  "acceptance 0.8): warmup(n, step_size(), auto_mass(), chees()), as chees_hmc(U) sets up");
    return hmc && step;
  }

  struct state {
    chees_state chees;
    std::int64_t updated = 0;  ///< an update this transition, for settle to clip
  };

  template <class K>
  state init(K const& k, warmup_setup const& w) const {
    if (w.chains < 2) throw std::invalid_argument("ember::warmup: chees() needs at least 2 chains (it adapts from their ensemble)");
    state s;
    s.chees.learning_rate = detail::checked_learning_rate(learning_rate);
    // From one step's length unless the user gave T: ChEES's criterion can have several local
    // maxima (on a Gaussian, T ≈ 2.2σ, 5.4σ, …), and climbing from below finds the first.
    double const eps = detail::first_step_size(k);
    s.chees.start(k.trajectory_length > 0 ? double(k.trajectory_length) : eps);
    return s;
  }
  template <class K>
  void set(state const& s, kernel_params<K>& p) const {
    p.trajectory_length = s.chees.current();
  }

  template <class K, class R>
  void update(state& s, warmup_step<K, R> const& step) const {
    using T = typename K::value_type;
    constexpr int D = K::dim;
    double m[2 + 2 * D] = {};
    step.sum(detail::chees_means<T, D>{step.view}, m);
    if (!(m[0] > 1 && m[1] > 0)) return;
    detail::chees_gradient<T, D> g{step.view, {}, {}, {}};
    for (int i = 0; i < D; ++i) {
      g.mean0[i] = m[2 + i] / m[0];
      g.mean1[i] = m[2 + D + i] / m[1];
      double const sd = detail::metric_sd(step.kernel.metric, i);
      g.w[i] = 1 / (sd * sd);
    }
    double sum[1] = {0};
    step.sum(g, sum);
    // The trajectory simulated at t was uT with u the Halton factor of t; d x'/d log T = uT v'.
    double const uT = halton(std::uint64_t(step.t) + 1, 2) * s.chees.current();
    s.chees.update(uT * sum[0] / m[1]);
    s.updated = 1;
  }

  /// T within [ε, 1000ε] of the step size the next transition uses; after a metric change, T in
  /// the new metric's time: ChEES's criterion is dominated by the directions of largest
  /// standardised variance, so T scales with their standard deviation rᵢ under the old metric
  /// (rᵢ = sᵢ(new)/sᵢ(old)), weighted as the criterion weights them, by rᵢ⁴.
  template <class K, class R>
  void settle(state& s, warmup_step<K, R> const& step) const {
    if (s.updated) {
      double const eps = step.params->step_size ? *step.params->step_size : double(step.kernel.step_size);
      s.chees.clip(eps, chees_state::max_steps_per_trajectory * eps);
      s.updated = 0;
    }
    if (step.metric_changed) {
      double num = 0, den = 0;
      for (int i = 0; i < K::dim; ++i) {
        double const r = detail::metric_sd(step.next->metric, i) / detail::metric_sd(step.kernel.metric, i), r4 = r * r * r * r;
        num += r4 * r;
        den += r4;
      }
      s.chees.rescale(den / num);
    }
  }

  /// The kept T: the running average, within [ε̄, 1000ε̄] (it can sit outside the iterates' band).
  template <class K>
  void final(state const& s, kernel_params<K>& p) const {
    p.trajectory_length = s.chees.final();
    p.trajectory_steps = {1.0, chees_state::max_steps_per_trajectory};
  }

  /// After warm-up, a word when the adaptation still pressed on a bound after the last metric
  /// change: clipped in at least a tenth of the updates since.
  template <class K>
  void notes(state const& s, K const& tuned, adapter_notes& n) const {
    n.harmonic = true;  // the step size's acceptance is the harmonic mean over chains
    if (!n.finished) return;
    auto const& ch = s.chees;
    double const T = double(tuned.trajectory_length), eps = double(tuned.step_size);
    char b[480];
    if (ch.clipped_high > 0 && 10 * ch.clipped_high >= ch.recent) {
      std::snprintf(b, sizeof b,
                    "WARNING: ChEES's trajectory length reached its upper bound, 1000 step sizes, in %lld of the "
                    "last %lld warm-up updates (kept T = %.4g = %.0f step sizes): the target wants longer "
                    "trajectories than this step size affords (a funnel's neck, a badly scaled dimension), so "
                    "the chains may mix slowly; check R-hat and ESS, adapt a metric, or reparametrise.",
                    (long long)ch.clipped_high, (long long)ch.recent, T, T / eps);
      n.warnings.emplace_back(b);
    } else if (ch.clipped_low > 0 && 10 * ch.clipped_low >= ch.recent) {
      std::snprintf(b, sizeof b,
                    "WARNING: ChEES's trajectory length reached its lower bound, one step size, in %lld of the "
                    "last %lld warm-up updates (kept T = %.4g = %.2f step sizes): transitions of a leapfrog "
                    "step or two are a random walk; the adaptation found no longer trajectory worth its cost.",
                    (long long)ch.clipped_low, (long long)ch.recent, T, T / eps);
      n.warnings.emplace_back(b);
    }
  }
};

/// `chees()`, `chees({.learning_rate = 0.05})`.
inline chees_adapter chees(chees_adapter o = {}) { return {detail::checked_learning_rate(o.learning_rate)}; }

}  // namespace ember
