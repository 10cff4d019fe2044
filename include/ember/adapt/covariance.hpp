#pragma once
/// \file
/// `pooled_covariance<D, Dense>`: the mean and (co)variance of draws pooled over chains and over
/// the transitions of a window, accumulated one transition at a time from the sums a backend
/// reduces over chains (n, Σx, Σx² or Σxxᵀ, in double, in a fixed order). Each transition's
/// sums become a mean and a scatter, and transitions are combined with Chan, Golub & LeVeque's
/// pairwise update (the Welford recurrence for blocks), so no Σx² − n·mean² ever spans the
/// window. `metric()` regularises as Stan does, Σ ← n/(n + 5) Σ + 10⁻³ · 5/(n + 5) I, and returns
/// the metric whose L Lᵀ is Σ: the standard deviations (diagonal) or its Cholesky factor (dense,
/// computed here in double: D ≤ 64, and this header also serves device translation units, which
/// Eigen must not enter).

#include <ember/core/metric.hpp>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ember {

template <int D, bool Dense>
struct pooled_covariance {
  /// Values per transition that the reduction produces: n, Σx, then Σx² (diagonal) or the upper
  /// triangle of Σxxᵀ row by row (dense).
  static constexpr int sums = 1 + D + (Dense ? D * (D + 1) / 2 : D);

  double n = 0;
  double mean[D] = {};
  double m2[Dense ? D * (D + 1) / 2 : D] = {};

  void reset() { *this = pooled_covariance{}; }

  /// Adds one transition's sums (as laid out above).
  void add(double const* s) {
    double const nb = s[0];
    if (!(nb > 0)) return;
    double mb[D];
    for (int i = 0; i < D; ++i) mb[i] = s[1 + i] / nb;
    double const na = n, nn = na + nb, f = na * nb / nn;
    double delta[D];
    for (int i = 0; i < D; ++i) delta[i] = mb[i] - mean[i];
    int q = 0;
    for (int i = 0; i < D; ++i)
      for (int j = Dense ? i : i; j < (Dense ? D : i + 1); ++j, ++q) {
        double const scatter = s[1 + D + q] - nb * mb[i] * mb[j];
        m2[q] += scatter + delta[i] * delta[j] * f;
      }
    for (int i = 0; i < D; ++i) mean[i] += delta[i] * nb / nn;
    n = nn;
  }

  /// The regularised covariance's factor as a metric of value type T.
  template <class T>
  auto metric() const {
    if (n < 3) throw std::runtime_error("ember::warmup: a metric window saw fewer than 3 live draws");
    double const w = n / (n + 5), shrink = 1e-3 * 5 / (n + 5);
    if constexpr (!Dense) {
      diagonal_metric<T, D> m;
      for (int i = 0; i < D; ++i) m.scale[i] = T(std::sqrt(w * m2[i] / (n - 1) + shrink));
      return m;
    } else {
      std::vector<double> S(std::size_t(D * D)), L(std::size_t(D * D), 0.0);
      int q = 0;
      for (int i = 0; i < D; ++i)
        for (int j = i; j < D; ++j, ++q) S[i * D + j] = S[j * D + i] = w * m2[q] / (n - 1) + (i == j ? shrink : 0.0);
      // Cholesky–Banachiewicz, row by row.
      for (int i = 0; i < D; ++i)
        for (int j = 0; j <= i; ++j) {
          double a = S[i * D + j];
          for (int k = 0; k < j; ++k) a -= L[i * D + k] * L[j * D + k];
          if (i == j) {
            if (!(a > 0))
              throw std::runtime_error("ember::warmup: the pooled covariance of a metric window is not positive definite");
            L[i * D + i] = std::sqrt(a);
          } else {
            L[i * D + j] = a / L[j * D + j];
          }
        }
      dense_metric<T, D> m;
      for (int i = 0; i < D; ++i)
        for (int j = 0; j <= i; ++j) m.lower[i * (i + 1) / 2 + j] = T(L[i * D + j]);
      return m;
    }
  }
};

/// The diagonal metric from draws and gradients (the Fisher-divergence diagonal of Seyboldt,
/// Carlson & Carpenter, arXiv:2603.18845; nutpie's default): σᵢ² = √(Var xᵢ / Var ∂ᵢU), regularised as `metric()` is. On a Gaussian
/// with independent coordinates it is the variance whatever the spread of the draws, since
/// ∂ᵢU = (xᵢ − μᵢ)/σᵢ²: chains still on their way in from far starts inflate Var xᵢ and Var ∂ᵢU
/// alike, where the draws' variance alone takes the whole spread (earnings-earn_height: a
/// metric 2.5× too wide after 1,000 warm-up transitions, R̂ 1.022). Where coordinates correlate
/// it lies between the marginal variance and the inverse precision, the diagonal that minimises
/// the Fisher divergence to a Gaussian. A coordinate whose gradient never varied falls back to
/// the draws' variance.
template <class T, int D>
diagonal_metric<T, D> diagonal_metric_from_gradients(pooled_covariance<D, false> const& x,
                                                     pooled_covariance<D, false> const& g) {
  auto m = x.template metric<T>();
  if (!(g.n >= 3)) return m;
  double const w = x.n / (x.n + 5), shrink = 1e-3 * 5 / (x.n + 5);
  for (int i = 0; i < D; ++i) {
    double const vx = x.m2[i] / (x.n - 1), vg = g.m2[i] / (g.n - 1);
    double const v = std::sqrt(vx / vg);
    if (vg > 0 && std::isfinite(v) && v > 0) m.scale[i] = T(std::sqrt(w * v + shrink));
  }
  return m;
}

}  // namespace ember
