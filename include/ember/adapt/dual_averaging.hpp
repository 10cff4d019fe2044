#pragma once
/// \file
/// `dual_averaging`: the step-size adaptation of Hoffman & Gelman (2014, §3.2), as Stan runs it.
/// With target acceptance δ and observed acceptance probability αₜ at iteration t:
///   H̄ₜ = (1 − 1/(t + t₀)) H̄ₜ₋₁ + (δ − αₜ)/(t + t₀),
///   log εₜ = μ − (√t / γ) H̄ₜ,
///   log ε̄ₜ = t^{−κ} log εₜ + (1 − t^{−κ}) log ε̄ₜ₋₁,
/// with μ = log(10 ε₀), γ = 0.05, t₀ = 10, κ = 0.75. εₜ is used during warm-up and ε̄ afterwards.
/// Here αₜ is the mean acceptance probability over all live chains at warm-up transition t, so one
/// update already averages thousands of proposals. ChEES's warm-up sets γ = 0.2 and μ = log ε₀
/// (adapt/warmup.hpp says why).

#include <cmath>
#include <cstdint>

namespace ember {

struct dual_averaging {
  double target = 0.8;
  double gamma = 0.05;    ///< how far from μ the iterates may go (larger: less far, less noisy)
  double explore = 10;    ///< μ = log(explore · ε₀)
  double mu = 0, log_eps = 0, log_eps_bar = 0, h_bar = 0;
  std::int64_t t = 0;
  static constexpr double t0 = 10, kappa = 0.75;

  /// (Re)starts from step size eps0 (Stan restarts at the end of every metric window).
  void restart(double eps0) {
    mu = std::log(explore * eps0);
    log_eps = std::log(eps0);
    log_eps_bar = 0;
    h_bar = 0;
    t = 0;
  }
  /// One iteration with mean acceptance probability alpha (NaN counts as 0: every proposal failed).
  void update(double alpha) {
    if (!(alpha >= 0)) alpha = 0;
    if (alpha > 1) alpha = 1;
    ++t;
    double const w = 1.0 / (double(t) + t0);
    h_bar = (1 - w) * h_bar + w * (target - alpha);
    log_eps = mu - std::sqrt(double(t)) / gamma * h_bar;
    double const eta = std::pow(double(t), -kappa);
    log_eps_bar = eta * log_eps + (1 - eta) * log_eps_bar;
  }
  double current() const { return std::exp(log_eps); }
  /// The step size to keep after warm-up.
  double final() const { return t > 0 ? std::exp(log_eps_bar) : std::exp(log_eps); }
};

}  // namespace ember
