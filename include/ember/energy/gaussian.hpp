#pragma once
/// \file
/// `gaussian`: the energy of a normal distribution, U(x) = ½ (x − μ)ᵀ Σ⁻¹ (x − μ), in three
/// forms chosen by the covariance argument of its constructor:
/// isotropic (Σ = σ²I), diagonal (Σ = diag(σ²)) and full (any symmetric positive definite Σ).
/// Models `DifferentiableEnergy`. Like TorchEBM's Gaussian energy it omits the normalising
/// constant ½ log det(2πΣ), which `log_normalizer()` returns.

#include <ember/core/math.hpp>
#include <ember/core/vec.hpp>
#include <ember/energy/detail/check.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace ember {

/// Covariance forms of `gaussian` and `gaussian_mixture`.
namespace covariance {
struct isotropic {};
struct diagonal {};
struct full {};
}  // namespace covariance

template <class T, int D, class Form = covariance::full>
struct gaussian;

/// Σ = σ²I. Stored as 1/σ² so the hot loop never divides.
template <class T, int D>
struct gaussian<T, D, covariance::isotropic> {
  using value_type = T;
  static constexpr int dim = D;

  vec<T, D> mean;
  T inv_var;
  T log_norm;

  gaussian(vec<T, D> const& mu, T sigma) : mean(mu) {
    detail::require_positive(sigma, "ember::gaussian", "sigma");
    inv_var = T(1) / (sigma * sigma);
    log_norm = T(0.5 * D * std::log(two_pi<double> * double(sigma) * double(sigma)));
  }

  /// ½ log det(2πΣ): add it to U for the exact negative log density.
  T log_normalizer() const { return log_norm; }

  template <class S>
  EMBER_HD S value(vec<S, D> const& x) const {
    S q = S(0);
    for (int i = 0; i < D; ++i) {
      S r = x[i] - mean[i];
      q = q + r * r;
    }
    return S(T(0.5) * inv_var) * q;
  }

  template <class S>
  EMBER_HD S value_and_grad(vec<S, D> const& x, vec<S, D>& g) const {
    S q = S(0);
    for (int i = 0; i < D; ++i) {
      S r = x[i] - mean[i];
      g[i] = S(inv_var) * r;
      q = q + r * g[i];
    }
    return S(T(0.5)) * q;
  }
};

/// Σ = diag(σ₁², …, σ_D²). Stored as 1/σᵢ².
template <class T, int D>
struct gaussian<T, D, covariance::diagonal> {
  using value_type = T;
  static constexpr int dim = D;

  vec<T, D> mean;
  vec<T, D> inv_var;
  T log_norm;

  gaussian(vec<T, D> const& mu, vec<T, D> const& sigma) : mean(mu) {
    double ln = 0;
    for (int i = 0; i < D; ++i) {
      detail::require_positive(sigma[i], "ember::gaussian", "every sigma");
      inv_var[i] = T(1) / (sigma[i] * sigma[i]);
      ln += 0.5 * std::log(two_pi<double> * double(sigma[i]) * double(sigma[i]));
    }
    log_norm = T(ln);
  }

  T log_normalizer() const { return log_norm; }

  template <class S>
  EMBER_HD S value(vec<S, D> const& x) const {
    S q = S(0);
    for (int i = 0; i < D; ++i) {
      S r = x[i] - mean[i];
      q = q + S(inv_var[i]) * r * r;
    }
    return S(T(0.5)) * q;
  }

  template <class S>
  EMBER_HD S value_and_grad(vec<S, D> const& x, vec<S, D>& g) const {
    S q = S(0);
    for (int i = 0; i < D; ++i) {
      S r = x[i] - mean[i];
      g[i] = S(inv_var[i]) * r;
      q = q + r * g[i];
    }
    return S(T(0.5)) * q;
  }
};

/// Full covariance. The precision P = Σ⁻¹ and log det Σ are computed once on the host by a
/// Cholesky factorisation in double; a Σ that is not symmetric positive definite is rejected
/// with `std::invalid_argument`. The gradient is P(x − μ): D² multiply-adds.
template <class T, int D>
struct gaussian<T, D, covariance::full> {
  using value_type = T;
  static constexpr int dim = D;

  vec<T, D> mean;
  vec<vec<T, D>, D> precision;
  T log_norm;

  gaussian(vec<T, D> const& mu, std::array<std::array<T, D>, D> const& cov) : mean(mu) {
    double L[D][D] = {};
    double scale = 0;
    for (int i = 0; i < D; ++i)
      for (int j = 0; j < D; ++j) {
        if (!std::isfinite(double(cov[i][j])))
          throw std::invalid_argument("ember::gaussian: the covariance has a non-finite entry");
        scale = std::fmax(scale, std::fabs(double(cov[i][j])));
      }
    for (int i = 0; i < D; ++i)
      for (int j = 0; j < i; ++j)
        if (std::fabs(double(cov[i][j]) - double(cov[j][i])) > 1e-6 * scale)
          throw std::invalid_argument("ember::gaussian: the covariance is not symmetric (entry (" +
                                      std::to_string(i) + ", " + std::to_string(j) + "))");
    // Cholesky Σ = L Lᵀ; a non-positive pivot means Σ is not positive definite.
    double logdet = 0;
    for (int j = 0; j < D; ++j) {
      double d = double(cov[j][j]);
      for (int k = 0; k < j; ++k) d -= L[j][k] * L[j][k];
      if (!(d > 1e-12 * scale))
        throw std::invalid_argument(
            "ember::gaussian: the covariance is not positive definite (Cholesky pivot " +
            std::to_string(j) + " is " + std::to_string(d) + ")");
      L[j][j] = std::sqrt(d);
      logdet += 2 * std::log(L[j][j]);
      for (int i = j + 1; i < D; ++i) {
        double s = double(cov[i][j]);
        for (int k = 0; k < j; ++k) s -= L[i][k] * L[j][k];
        L[i][j] = s / L[j][j];
      }
    }
    // P = L⁻ᵀ L⁻¹, column by column: solve L y = e_c, then Lᵀ p = y.
    for (int c = 0; c < D; ++c) {
      double y[D], p[D];
      for (int i = 0; i < D; ++i) {
        double s = (i == c) ? 1.0 : 0.0;
        for (int k = 0; k < i; ++k) s -= L[i][k] * y[k];
        y[i] = s / L[i][i];
      }
      for (int i = D - 1; i >= 0; --i) {
        double s = y[i];
        for (int k = i + 1; k < D; ++k) s -= L[k][i] * p[k];
        p[i] = s / L[i][i];
      }
      for (int i = 0; i < D; ++i) precision[i][c] = T(p[i]);
    }
    log_norm = T(0.5 * (D * std::log(two_pi<double>) + logdet));
  }

  T log_normalizer() const { return log_norm; }

  template <class S>
  EMBER_HD S value(vec<S, D> const& x) const {
    vec<S, D> g;
    return value_and_grad(x, g);
  }

  template <class S>
  EMBER_HD S value_and_grad(vec<S, D> const& x, vec<S, D>& g) const {
    vec<S, D> r;
    for (int i = 0; i < D; ++i) r[i] = x[i] - mean[i];
    S q = S(0);
    for (int i = 0; i < D; ++i) {
      S gi = S(precision[i][0]) * r[0];
      for (int j = 1; j < D; ++j) gi = gi + S(precision[i][j]) * r[j];
      g[i] = gi;
      q = q + r[i] * gi;
    }
    return S(T(0.5)) * q;
  }
};

template <class T, int D>
gaussian(vec<T, D>, T) -> gaussian<T, D, covariance::isotropic>;
template <class T, int D>
gaussian(vec<T, D>, vec<T, D>) -> gaussian<T, D, covariance::diagonal>;
// std::array's size is a std::size_t: an `int D` cannot be deduced from it, hence N.
template <class T, int D, std::size_t N>
  requires(N == std::size_t(D))
gaussian(vec<T, D>, std::array<std::array<T, N>, N>) -> gaussian<T, D, covariance::full>;

}  // namespace ember
