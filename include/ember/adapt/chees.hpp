#pragma once
/// \file
/// `chees_state`: HMC trajectory-length adaptation by ChEES (Hoffman, Radul & Sountsov 2021).
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

#include <algorithm>
#include <cmath>
#include <cstdint>

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

}  // namespace ember
