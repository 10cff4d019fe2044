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
/// ±0.35), and the kept T is the t^{−0.75}-weighted average of log T over warm-up (as dual
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
  static constexpr double beta2 = 0.95, clip = 0.35, kappa = 0.75;

  void start(double T0) {
    log_T = std::log(T0);
    log_T_bar = log_T;
    v = 0;
    t = n = 0;
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
  }
  /// One Adam step on log T with gradient estimate g (skipped if g is not finite).
  void update(double g) {
    if (!std::isfinite(g)) return;
    ++t;
    ++n;
    v = beta2 * v + (1 - beta2) * g * g;
    double const vhat = v / (1 - std::pow(beta2, double(n)));
    double step = learning_rate * g / (std::sqrt(vhat) + 1e-8);
    log_T += std::clamp(step, -clip, clip);
    double const eta = std::pow(double(t), -kappa);
    log_T_bar = eta * log_T + (1 - eta) * log_T_bar;
  }
  double current() const { return std::exp(log_T); }
  double final() const { return std::exp(log_T_bar); }
};

}  // namespace ember
