#pragma once
/// \file
/// `pooled_covariance<D, Dense>`: the mean and (co)variance of draws pooled over chains and over
/// the transitions of a window, accumulated one transition at a time from the sums a backend
/// reduces over chains (n, Σx, Σx² or Σxxᵀ, in double, in a fixed order). Each transition's
/// sums become a mean and a scatter, and transitions are combined with Chan, Golub & LeVeque's
/// pairwise update (the Welford recurrence for blocks), so no Σx² − n·mean² ever spans the
/// window. `metric()` regularises as Stan does, Σ ← n/(n + 5) Σ + 10⁻³ · 5/(n + 5) I, and returns
/// the metric whose L Lᵀ is Σ: the standard deviations (diagonal) or its Cholesky factor (dense,
/// in double by detail/dense.hpp: D ≤ 64).

#include <ember/core/metric.hpp>
#include <ember/detail/dense.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
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

  /// Dense: the covariance, scatter / (n − 1) without regularisation, as a row-major D × D matrix.
  std::vector<double> covariance() const
    requires Dense
  {
    std::vector<double> C(std::size_t(D * D));
    int q = 0;
    for (int i = 0; i < D; ++i)
      for (int j = i; j < D; ++j, ++q) C[std::size_t(i * D + j)] = C[std::size_t(j * D + i)] = m2[q] / (n - 1);
    return C;
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
      std::vector<double> S(std::size_t(D * D)), L;
      int q = 0;
      for (int i = 0; i < D; ++i)
        for (int j = i; j < D; ++j, ++q) S[i * D + j] = S[j * D + i] = w * m2[q] / (n - 1) + (i == j ? shrink : 0.0);
      if (detail::cholesky_lower(S.data(), D, L))
        throw std::runtime_error("ember::warmup: the pooled covariance of a metric window is not positive definite");
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

/// The diagonal of a dense window's sums (the same numbers a diagonal window accumulates).
template <int D>
pooled_covariance<D, false> diagonal_of(pooled_covariance<D, true> const& c) {
  pooled_covariance<D, false> d;
  d.n = c.n;
  for (int i = 0, q = 0; i < D; q += D - i, ++i) {  // q: entry (i, i) of the upper triangle, row by row
    d.mean[i] = c.mean[i];
    d.m2[i] = c.m2[q];
  }
  return d;
}

/// The dense metric from draws and gradients: Σ = Σx # Σg⁻¹, the matrix geometric mean
/// Σx^½ (Σx^½ Σg Σx^½)^−½ Σx^½ of the draws' covariance Σx and the inverse of the gradients'
/// covariance Σg (the dense form of `diagonal_metric_from_gradients`, above; Seyboldt, Carlson &
/// Carpenter's Fisher-divergence metric). It is the Σ with Σ Σg Σ = Σx; on a Gaussian target,
/// Σg = Σ⁻¹ exactly, so it is the target's covariance whatever the spread of the draws: chains
/// still on their way in inflate Σx and Σg alike, where the draws alone take the whole spread
/// (earnings-earn_height: a dense metric 3× too wide after 1,000 warm-up transitions). Regularised
/// as `metric()` is. A window whose draws or gradients did not vary in some direction (their
/// covariance singular to within 10⁻¹² or 10⁻⁹ of its largest eigenvalue) gets the diagonal rule's
/// metric instead; a window without gradients, the draws' covariance.
template <class T, int D>
dense_metric<T, D> dense_metric_from_gradients(pooled_covariance<D, true> const& x, pooled_covariance<D, true> const& g) {
  if (!(g.n >= 3) || !(x.n >= 3)) return x.template metric<T>();
  // Where the gradients' covariance is singular in some direction (to rounding: chains far out in
  // the first windows, with gradients of 10⁶ that barely vary), the diagonal rule, which needs
  // only each coordinate's variances, as a dense factor.
  auto const diagonal = [&] {
    auto const d = diagonal_metric_from_gradients<T>(diagonal_of(x), diagonal_of(g));
    dense_metric<T, D> m{};
    for (int i = 0; i < D; ++i) m.lower[i * (i + 1) / 2 + i] = d.scale[i];
    return m;
  };
  std::vector<double> A = x.covariance(), B = g.covariance();
  std::vector<double> U, la, V, mu;
  detail::symmetric_eigen(A, D, U, la);
  double top = 0;
  for (double v : la) top = std::max(top, v);
  for (double v : la)
    if (!(v > 1e-12 * top) || !std::isfinite(v)) return diagonal();
  auto const half = detail::eigen_function(U, la, D, [](double v) { return std::sqrt(v); });
  auto C = detail::multiply(detail::multiply(half, B, D), half, D);
  detail::symmetric_eigen(C, D, V, mu);
  top = 0;
  for (double v : mu) top = std::max(top, v);
  for (double v : mu)
    if (!(v > 1e-9 * top) || !std::isfinite(v)) return diagonal();
  auto const inv_half = detail::eigen_function(V, mu, D, [](double v) { return 1 / std::sqrt(v); });
  auto const S = detail::multiply(detail::multiply(half, inv_half, D), half, D);
  // The same regularisation and factorisation as the draws' own estimate: S in place of the
  // draws' scatter over n − 1.
  pooled_covariance<D, true> as_draws;
  as_draws.n = x.n;
  int q = 0;
  for (int i = 0; i < D; ++i)
    for (int j = i; j < D; ++j, ++q) as_draws.m2[q] = 0.5 * (S[std::size_t(i * D + j)] + S[std::size_t(j * D + i)]) * (x.n - 1);
  return as_draws.template metric<T>();
}

namespace detail {

// The cost of a metric M = L Lᵀ on a window, in leapfrog steps per unit of the slowest
// direction's time: the step size is bounded by the stiffest whitened direction, 1/√λmax(Lᵀ Σg L),
// and a trajectory must span the widest, √λmax(L⁻¹ Σx L⁻ᵀ), so a transition that moves the widest
// direction takes about √(λmax(L⁻¹ Σx L⁻ᵀ) · λmax(Lᵀ Σg L)) steps (on a Gaussian, the whitened
// condition number's root). L, A (Σx) and B (Σg) are D × D, row-major.
inline double metric_cost(std::vector<double> const& L, std::vector<double> const& A, std::vector<double> const& B, int D) {
  std::vector<double> Li(std::size_t(D * D), 0.0);  // L⁻¹, lower triangular
  for (int c = 0; c < D; ++c)
    for (int i = c; i < D; ++i) {
      double a = i == c ? 1.0 : 0.0;
      for (int k = c; k < i; ++k) a -= L[std::size_t(i * D + k)] * Li[std::size_t(k * D + c)];
      Li[std::size_t(i * D + c)] = a / L[std::size_t(i * D + i)];
    }
  auto transpose = [D](std::vector<double> const& m) {
    std::vector<double> t(m.size());
    for (int i = 0; i < D; ++i)
      for (int j = 0; j < D; ++j) t[std::size_t(j * D + i)] = m[std::size_t(i * D + j)];
    return t;
  };
  auto largest = [D](std::vector<double> m) {
    std::vector<double> vecs, vals;
    symmetric_eigen(m, D, vecs, vals);
    double e = vals[0];
    for (double v : vals) e = std::max(e, v);
    return e;
  };
  auto const Aw = multiply(multiply(Li, A, D), transpose(Li), D);
  auto const Bw = multiply(multiply(transpose(L), B, D), L, D);
  return std::sqrt(largest(Aw) * largest(Bw));
}

}  // namespace detail

/// `auto_mass()`'s choice at a window's close: the diagonal metric from draws and gradients, or
/// the dense one (`dense_metric_from_gradients`), by `detail::metric_cost`, a Gaussian's step
/// count. The dense one is kept where it promises fewer than half the diagonal's steps (its step
/// costs D² multiply-adds where the diagonal's costs D, and its D(D + 1)/2 numbers are noisier)
/// and the window looks Gaussian in its coordinates, its own cost at most 2 (on a Gaussian it is
/// (1 + √(D/n))², n the window's effective draws: 1 if the draws agree with the gradients); or,
/// where the window does not look Gaussian (a funnel's neck, chains still on their way in), where
/// it promises a twentieth. hier_logit (60 parameters, a non-centred hierarchy) scored 16.7
/// against 2.9-3.0, and with its dense metric ChEES-HMC had 70-123 divergent transitions against
/// 1-2 and 0.85 times the ESS per second; gp_pois_regr 58 against 5.4, and NUTS with its dense
/// metric missed R̂ < 1.01 on 9 of 9 seeds (2 of 9 with the diagonal one); kilpisjarvi (chains
/// still in transit along its ridge) 493 against 22, and gained 2.5× (ChEES-HMC) and 5.1× (NUTS).
/// Without gradients (g.n = 0) it keeps the diagonal metric from the draws: the draws alone cannot
/// tell a correlation from chains still on their way in (a dense metric fitted to them always
/// whitens them in-sample); so does a window whose dense estimate is not positive definite.
/// `costs`, if given, receives the two costs (diagonal, dense; NaN where not scored).
template <class T, int D>
auto_metric<T, D> auto_metric_from_gradients(pooled_covariance<D, true> const& x, pooled_covariance<D, true> const& g,
                                             double* costs = nullptr) {
  auto_metric<T, D> m;
  m.full = dense_metric<T, D>::identity();
  if (costs) costs[0] = costs[1] = std::numeric_limits<double>::quiet_NaN();
  if (!(g.n >= 3)) {
    m.diagonal = diagonal_of(x).template metric<T>();
    return m;
  }
  m.diagonal = diagonal_metric_from_gradients<T>(diagonal_of(x), diagonal_of(g));
  try {
    m.full = dense_metric_from_gradients<T>(x, g);
  } catch (std::runtime_error const&) {  // not positive definite: the diagonal metric it is
    m.full = dense_metric<T, D>::identity();
    return m;
  }
  std::vector<double> const A = x.covariance(), B = g.covariance();
  std::vector<double> Ld(std::size_t(D * D), 0.0), Lf(std::size_t(D * D), 0.0);
  for (int i = 0; i < D; ++i) {
    Ld[std::size_t(i * D + i)] = double(m.diagonal.scale[i]);
    for (int j = 0; j <= i; ++j) Lf[std::size_t(i * D + j)] = double(m.full(i, j));
  }
  double const diag = detail::metric_cost(Ld, A, B, D), dense = detail::metric_cost(Lf, A, B, D);
  if (costs) {
    costs[0] = diag;
    costs[1] = dense;
  }
  m.dense = std::isfinite(diag) && std::isfinite(dense) && (diag > 20 * dense || (diag > 2 * dense && dense <= 2)) ? 1 : 0;
  return m;
}

}  // namespace ember
