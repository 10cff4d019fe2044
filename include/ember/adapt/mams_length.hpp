#pragma once
/// \file
/// `mams_length()`: the trajectory length L of adjusted MCLMC (kernel/adjusted_mclmc.hpp) over a
/// warm-up, as L = c·λ.
///
/// λ is the size of the target in the metric's units, √(Σᵢ σᵢ²/sᵢ²) (MAMS's first guess, Robnik
/// et al. 2025, with sᵢ the metric's scales): in the init buffer from the chains' spread at each
/// transition, afterwards from the pooled variance of all chains' draws in the last closed metric
/// window (adapt/mass_windows.hpp; with an adapted metric λ ≈ √D).
///
/// c corrects it by the chains' decorrelation, as MAMS's third stage does with the ESS of one
/// chain: over each window, the lag-1 autocorrelation ρᵢ of every coordinate is measured across
/// chains (pooled Cov(x_t, x_{t+1}) / Var), and ESS per transition is estimated as the harmonic
/// mean over coordinates of (1 − ρᵢ)/(1 + ρᵢ), so that the slowest coordinates set it, as
/// BlackJAX's mean of steps/ESS over coordinates does (the arithmetic mean let a fast coordinate
/// hide two slow ones: 10× too short on earnings-earn_height, R̂ 1.03). At the close of every
/// window but the first (whose draws may still be arriving) and at warm-up's end, c ← c · 0.4 /
/// ESS (clipped to [¼, 4] a time): the fixed point of MAMS's L ← 0.4 L / ESS is the length at
/// which a transition gives 0.4 effective samples. L stays within [ε, max_integrator_steps · ε].
/// Needs at least 2 chains; the step size (`step_size()`) aims at the kernel's 0.9 meanwhile. An
/// adapter (adapt/adapter.hpp).

#include <ember/adapt/adapter.hpp>
#include <ember/adapt/chees.hpp>
#include <ember/core/config.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace ember {

namespace detail {
// Over live chains: n, then per coordinate Σx, Σx², Σx', Σx'², Σx x' (x before the transition,
// x' after it).
template <class T, int D>
struct lag_one_sums {
  static constexpr int size = 1 + 5 * D;
  chain_view<T> v;
  EMBER_HD void operator()(std::int64_t c, double* a) const {
    if (v.frozen[c]) return;
    a[0] += 1;
    for (int i = 0; i < D; ++i) {
      double const x = double(v.start[i * v.stride + c]), y = double(v.slots[i * v.stride + c]);
      double* s = a + 1 + 5 * i;
      s[0] += x;
      s[1] += x * x;
      s[2] += y;
      s[3] += y * y;
      s[4] += x * y;
    }
  }
};
}  // namespace detail

template <int D>
struct mams_length_state {
  static constexpr double max_change = 4;
  double ess_target = 0.4;       ///< effective samples per transition that c aims at
  double c = 1;                  ///< the decorrelation correction
  double lambda = 0;             ///< √(Σ σᵢ²/sᵢ²) as last measured
  double sigma2[D] = {};         ///< σᵢ² of the last closed window (0: none yet)
  double n = 0, sx[D] = {}, sxx[D] = {};          ///< the window's pooled moments (draws after transitions)
  double cov[D] = {}, var0[D] = {}, var1[D] = {};  ///< the window's pooled lag-1 sums
  std::int64_t windows = 0;      ///< windows closed
  std::int64_t max_steps = 1024; ///< the kernel's cap on integrator steps

  void reset_window() {
    n = 0;
    for (int i = 0; i < D; ++i) sx[i] = sxx[i] = cov[i] = var0[i] = var1[i] = 0;
  }
  /// Effective samples per transition from the window's lag-1 sums: the harmonic mean over
  /// coordinates of (1 − ρᵢ)/(1 + ρᵢ), so the slowest coordinates set it (0 if none).
  double ess_per_transition() const {
    double inv = 0;
    int m = 0;
    for (int i = 0; i < D; ++i) {
      if (!(var0[i] > 0 && var1[i] > 0)) continue;
      double const r = std::clamp(cov[i] / std::sqrt(var0[i] * var1[i]), -0.99, 0.99);
      inv += (1 + r) / (1 - r);
      ++m;
    }
    return m ? m / inv : 0;
  }
  void correct() {
    double const e = ess_per_transition();
    if (!(e > 0)) return;
    c *= std::clamp(ess_target / e, 1 / max_change, max_change);
  }
};

struct mams_length_adapter {
  double ess_target = 0.4;  ///< effective samples per transition the length aims at (MAMS's 0.4)

  static constexpr tunable tunes = tunable::trajectory_length;
  static constexpr observe observes = observe::trajectory;

  template <class K, class Warmup>
  static consteval bool fits() {
    constexpr bool ok = requires(K const& k) {
      k.with_trajectory_length(1.0);
      k.random_length;
    };
    static_assert(ok, "ember::warmup: mams_length() adapts adjusted_mclmc's trajectory length (an hmc kernel's is chees()'s)");
    return ok;
  }

  template <class K>
  using state = mams_length_state<K::dim>;

  template <class K>
  state<K> init(K const& k, warmup_setup const& w) const {
    if (w.chains < 2)
      throw std::invalid_argument("ember::warmup: mams_length() needs at least 2 chains (it measures their spread and correlation)");
    state<K> s;
    s.ess_target = ess_target;
    s.max_steps = k.max_integrator_steps;
    // Until the chains have been seen: the kernel's own L, else √D in the metric's units.
    s.lambda = k.trajectory_length > 0 ? double(k.trajectory_length) : std::sqrt(double(K::dim));
    return s;
  }

  template <class K>
  void set(state<K> const& s, kernel_params<K>& p) const {
    p.trajectory_length = s.c * s.lambda;
    p.trajectory_steps = {1.0, double(s.max_steps)};
  }

  template <class K, class R>
  void update(state<K>& s, warmup_step<K, R> const& step) const {
    using T = typename K::value_type;
    constexpr int D = K::dim;
    double a[1 + 5 * D] = {};
    step.sum(detail::lag_one_sums<T, D>{step.view}, a);
    double const m = a[0];
    if (!(m > 1)) return;
    double spread = 0;
    for (int i = 0; i < D; ++i) {
      double const* q = a + 1 + 5 * i;
      double const m0 = q[0] / m, m1 = q[2] / m;
      double const v0 = std::max(0.0, q[1] - m * m0 * m0), v1 = std::max(0.0, q[3] - m * m1 * m1);
      s.cov[i] += q[4] - m * m0 * m1;
      s.var0[i] += v0;
      s.var1[i] += v1;
      s.sx[i] += q[2];
      s.sxx[i] += q[3];
      if (s.windows == 0) {  // λ from this transition's spread only until a window has closed
        double const sd = detail::metric_sd(step.kernel.metric, i);
        spread += v1 / (m - 1) / (sd * sd);
      }
    }
    s.n += m;
    if (s.windows == 0 && spread > 0) s.lambda = std::sqrt(spread);
    bool const closes = step.windows.closes(step.t);
    if (closes) {
      // The window's pooled variance of the draws, and λ in the metric the next transitions use
      // (settle: the metric may change with this close).
      for (int i = 0; i < D; ++i) {
        double const mu = s.sx[i] / s.n;
        s.sigma2[i] = std::max(0.0, s.sxx[i] / s.n - mu * mu) * s.n / std::max(1.0, s.n - 1);
      }
      if (s.windows > 0) s.correct();
      ++s.windows;
      s.reset_window();
    } else if (step.last) {
      s.correct();
    }
  }

  template <class K, class R>
  void settle(state<K>& s, warmup_step<K, R> const& step) const {
    if (s.windows == 0 || !step.windows.closes(step.t)) return;
    double l = 0;
    for (int i = 0; i < K::dim; ++i) {
      double const sd = detail::metric_sd(step.next->metric, i);
      l += s.sigma2[i] / (sd * sd);
    }
    if (l > 0 && std::isfinite(l)) s.lambda = std::sqrt(l);
  }

  template <class K>
  void notes(state<K> const& s, K const& tuned, adapter_notes& n) const {
    if (!n.finished) return;
    double const L = double(tuned.trajectory_length), eps = double(tuned.step_size);
    if (L >= 0.999 * double(s.max_steps) * eps) {
      char b[400];
      std::snprintf(b, sizeof b,
                    "WARNING: MAMS's trajectory length reached its cap, %lld step sizes (L = %.4g, step size %.4g): "
                    "the target wants longer trajectories than this step size affords (a funnel's neck, a badly "
                    "scaled dimension), so the chains may mix slowly; check R-hat and ESS, or reparametrise.",
                    (long long)s.max_steps, L, eps);
      n.warnings.emplace_back(b);
    }
  }
};

/// `mams_length()`, `mams_length({.ess_target = 0.6})`.
inline mams_length_adapter mams_length(mams_length_adapter o = {}) {
  if (!(o.ess_target > 0 && o.ess_target < 10))
    throw std::invalid_argument("ember::mams_length: ess_target must be in (0, 10), got " + std::to_string(o.ess_target));
  return o;
}

}  // namespace ember
